"""Statistics over dims split across mesh axes, called by generated code inside ``jax.shard_map``.

Each function takes the local block ``x``, the reduced (or scanned) ``axis`` as the user wrote it
in global terms (the rank is the same locally), and ``axis_name``: the mesh axes splitting the
reduced dims (major first).  Each matches its ``jax.numpy`` function on the whole array (dtype,
NaN, ties, gradient) up to floating-point reassociation:

- ``var``/``std``: two passes, a global mean (local sum, psum) then the sum of squared deviations
  (psum), divided by the global count minus ``ddof``: two all-reduces.
- ``norm``: vector norms (sum-like orders: one psum; ``inf``/``-inf``: the max/min of ``abs``, as
  ``mr.max``) and matrix norms (``'fro'``; ``1``/``-1``/``inf``/``-inf``: a psum along one dim
  and a max/min along the other).
- ``prod``: local products, all-gathered (one small all-gather), multiplied: exact for zeros,
  signs, infinities and NaN (no logarithms).
- ``argmax``/``argmin``: the values as a totally ordered integer key (NaN first, as ``jnp`` has it;
  ``-0.0 == 0.0``), local arg, pmax/pmin of the key, then the smallest global index among the
  devices holding it (first occurrence): two all-reduces.
- ``any``/``all``: local, then an all-reduce max/min of the flags.
- ``nansum``: local sums of the non-NaN entries (float16/bfloat16 in float32), one psum; ``nanmean``
  that over the global count of non-NaN entries (a second psum); ``nanvar``/``nanstd`` the two passes of
  ``var`` over the non-NaN entries (three all-reduces: count, mean, squared deviations); ``nanmax``/
  ``nanmin`` the max (min) with NaN as the reduction's identity, NaN where every entry is (a third
  all-reduce: whether any device saw one).
- ``cumsum``/``cumprod``: local scan plus the exclusive prefix of the shard totals (one
  all-gather of the totals, masked by this device's position).
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["all", "any", "argmax", "argmin", "average", "cumprod", "cumsum", "cumulative", "matrix_norm", "nanmax",
           "nanmean", "nanmin", "nanstd", "nansum", "nanvar", "norm", "prod", "ptp", "segment_max", "segment_min",
           "std", "var"]

AxisName = str | tuple[str, ...]
Axis = int | tuple[int, ...]


def _axes(axis: Axis | None, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in (axis if isinstance(axis, tuple) else (axis,)))


def _named(axis_name: AxisName) -> bool:
    return axis_name not in ((), None, "")


def _psum(x: jax.Array, axis_name: AxisName) -> jax.Array:
    from meshify.runtime.ops import psum, varying  # ops imports this module last: import on use

    # (a count of a mask without a split dim of x is the same on those devices: summed all the same)
    return psum(varying(x, axis_name), axis_name) if _named(axis_name) else x


def _squeeze(x: jax.Array, axes: tuple[int, ...], keepdims: bool) -> jax.Array:
    return x if keepdims else jnp.squeeze(x, axes)


def _shards(axis_name: AxisName) -> int:
    return jax.lax.axis_size(axis_name) if _named(axis_name) else 1


# -- var / std --------------------------------------------------------------------------------------


def _var_dtypes(dtype_in, dtype) -> tuple[np.dtype, np.dtype]:
    """(computation dtype, result dtype) as ``jnp.var`` chooses them (float16 computed in float32)."""
    out = jax.eval_shape(lambda v: jnp.var(v, dtype=dtype), jax.ShapeDtypeStruct((1,), dtype_in)).dtype
    if dtype is not None:
        computation = np.dtype(dtype)
    elif jnp.issubdtype(dtype_in, jnp.inexact):
        computation = np.dtype(dtype_in)
    else:
        computation = np.dtype(out)
    if computation in (np.dtype(jnp.float16), np.dtype(jnp.bfloat16)):
        computation = np.dtype(jnp.float32)
    return computation, np.dtype(out)


def var(x: jax.Array, axis: Axis | None, axis_name: AxisName, ddof: float = 0, keepdims: bool = False,
        dtype=None, where: jax.Array | None = None, mean: jax.Array | None = None) -> jax.Array:
    """``jnp.var(x, axis, ddof=ddof, where=where)`` where reduced dims are split over ``axis_name`` (a
    ``where`` mask, of ``x``'s shape, counts its elements with one more psum).  ``mean``: the global
    mean of ``x`` over ``axis`` the caller computed already (``jnp.mean(x, axis, keepdims=True)``, whole),
    used instead of all-reducing it again when it has the computation's dtype."""
    axes = _axes(axis, x.ndim)
    computation, out = _var_dtypes(x.dtype, dtype)
    a = x.astype(computation)
    if where is None:
        count = jnp.asarray(math.prod(x.shape[i] for i in axes) * _shards(axis_name), computation)
    else:
        where = jnp.broadcast_to(where, x.shape)  # (a mask of x's trailing dims: counted for every leading entry)
        count = _psum(jnp.sum(where, axis=axes, keepdims=True, dtype=computation), axis_name)
    if mean is None or mean.dtype != computation:
        mean = _psum(jnp.sum(a, axis=axes, keepdims=True, where=where), axis_name) / count
    elif mean.ndim < x.ndim:
        mean = jnp.expand_dims(mean, axes)
    centered = a - mean
    if jnp.issubdtype(computation, jnp.complexfloating):
        centered = jnp.real(centered * jnp.conj(centered))
        computation = centered.dtype
    else:
        centered = jnp.square(centered)
    count = count if keepdims or where is None else jnp.squeeze(count, axes)
    normalizer = count.astype(computation) - jnp.asarray(ddof, computation)
    total = _psum(jnp.sum(centered, axis=axes, keepdims=keepdims, where=where), axis_name)
    result = (total / normalizer).astype(out)
    return jnp.where(normalizer > 0, result, jnp.asarray(jnp.nan, out))


def standardize(x: jax.Array, axis: int, axis_name: AxisName, epsilon=1e-5, algorithm: str = "fast") -> jax.Array:
    """``jax.nn.standardize(x, axis, epsilon=epsilon, algorithm=algorithm)`` along a dim split over ``axis_name``:
    each row's mean (and mean of squares, or of squared deviations) over the whole row, as ``jnp.mean`` computes
    it (:func:`meshify.runtime.ops.mean`: the sums and counts summed over the devices), then this device's block
    standardized as JAX does it."""
    from meshify.runtime.ops import mean

    mu = mean(x, axis, axis_name, True, keepdims=True)
    if algorithm == "stable":
        variance = mean(jnp.square(jnp.subtract(x, mu)), axis, axis_name, True, keepdims=True)
    else:  # "fast": the mean of squares less the squared mean, clipped at 0 (it can come out negative)
        variance = jnp.clip(mean(jnp.square(x), axis, axis_name, True, keepdims=True) - jnp.square(mu), 0)
    return jnp.subtract(x, mu) * jax.lax.rsqrt(variance + epsilon)


def std(x: jax.Array, axis: Axis | None, axis_name: AxisName, ddof: float = 0, keepdims: bool = False,
        dtype=None, where: jax.Array | None = None, mean: jax.Array | None = None) -> jax.Array:
    """``jnp.std(x, axis, ddof=ddof, where=where)`` where reduced dims are split over ``axis_name``."""
    return jnp.sqrt(var(x, axis, axis_name, ddof, keepdims, dtype, where, mean))


# -- nansum / nanmean / nanvar / nanstd / nanmax / nanmin ------------------------------------------


def _nan_dtypes(fn, dtype_in, dtype) -> tuple[np.dtype, np.dtype]:
    """(computation dtype, result dtype) of ``jnp.<fn>(x, dtype=dtype)`` for ``x`` of ``dtype_in``: the result's,
    float16/bfloat16 summed in float32 (rounded once, as one device's sum)."""
    out = np.dtype(jax.eval_shape(lambda v: fn(v, dtype=dtype), jax.ShapeDtypeStruct((1,), dtype_in)).dtype)
    wide = np.dtype(jnp.float32) if out in (np.dtype(jnp.float16), np.dtype(jnp.bfloat16)) else out
    return wide, out


def nansum(x: jax.Array, axis: Axis | None, axis_name: AxisName, keepdims: bool = False, dtype=None) -> jax.Array:
    """``jnp.nansum(x, axis)`` where reduced dims are split over ``axis_name``: local, one psum."""
    wide, out = _nan_dtypes(jnp.nansum, x.dtype, dtype)
    local = jnp.nansum(x, axis=_axes(axis, x.ndim), keepdims=keepdims, dtype=wide)
    return _psum(local, axis_name).astype(out)


def nanmean(x: jax.Array, axis: Axis | None, axis_name: AxisName, keepdims: bool = False, dtype=None) -> jax.Array:
    """``jnp.nanmean(x, axis)`` over split dims: the global sum of the non-NaN entries over their global
    count (two psums; NaN where there are none)."""
    axes = _axes(axis, x.ndim)
    wide, out = _nan_dtypes(jnp.nanmean, x.dtype, dtype)
    total = _psum(jnp.nansum(x, axis=axes, keepdims=keepdims, dtype=wide), axis_name)
    count = _psum(jnp.sum(~jnp.isnan(x), axis=axes, keepdims=keepdims, dtype=wide), axis_name)
    return (total / count).astype(out)


def nanvar(x: jax.Array, axis: Axis | None, axis_name: AxisName, ddof: float = 0, keepdims: bool = False,
           dtype=None) -> jax.Array:
    """``jnp.nanvar(x, axis, ddof=ddof)`` over split dims: ``var``'s two passes over the non-NaN entries
    (NaN entries contribute nothing, their gradient included), over their global count minus ``ddof``."""
    axes = _axes(axis, x.ndim)
    computation, out = _var_dtypes(x.dtype, dtype)
    a = x.astype(computation)
    valid = ~jnp.isnan(a)
    count = _psum(jnp.sum(valid, axis=axes, keepdims=True, dtype=computation), axis_name)
    mean = _psum(jnp.sum(jnp.where(valid, a, 0), axis=axes, keepdims=True), axis_name) / count
    centered = jnp.where(valid, a - mean, 0)
    if jnp.issubdtype(computation, jnp.complexfloating):
        centered = jnp.real(centered * jnp.conj(centered))
    else:
        centered = jnp.square(centered)
    total = _psum(jnp.sum(centered, axis=axes, keepdims=keepdims), axis_name)
    normalizer = _squeeze(count, axes, keepdims).astype(total.dtype) - jnp.asarray(ddof, total.dtype)
    positive = normalizer > 0
    result = total / jnp.where(positive, normalizer, jnp.ones_like(normalizer))
    return jnp.where(positive, result, jnp.asarray(jnp.nan, result.dtype)).astype(out)


def nanstd(x: jax.Array, axis: Axis | None, axis_name: AxisName, ddof: float = 0, keepdims: bool = False,
           dtype=None) -> jax.Array:
    """``jnp.nanstd(x, axis, ddof=ddof)`` over split dims."""
    return jnp.sqrt(nanvar(x, axis, axis_name, ddof, keepdims, dtype))


def _nan_extreme(x: jax.Array, axis: Axis | None, axis_name: AxisName, keepdims: bool, kind: str) -> jax.Array:
    from meshify.runtime import ops

    axes = _axes(axis, x.ndim)
    if not jnp.issubdtype(x.dtype, jnp.inexact):  # no NaN to skip
        return getattr(ops, kind)(x, axes, axis_name, keepdims=keepdims)
    valid = ~jnp.isnan(x)
    fill = jnp.asarray(-jnp.inf if kind == "max" else jnp.inf, x.dtype)
    out = getattr(ops, kind)(jnp.where(valid, x, fill), axes, axis_name, keepdims=True)
    seen = any(valid, axes, axis_name, keepdims=True)
    return _squeeze(jnp.where(seen, out, jnp.asarray(jnp.nan, x.dtype)), axes, keepdims)


def nanmax(x: jax.Array, axis: Axis | None, axis_name: AxisName, keepdims: bool = False) -> jax.Array:
    """``jnp.nanmax(x, axis)`` over split dims: the max of the non-NaN entries (ties share the gradient, as
    ``mr.max``'s), NaN where all are NaN."""
    return _nan_extreme(x, axis, axis_name, keepdims, "max")


def nanmin(x: jax.Array, axis: Axis | None, axis_name: AxisName, keepdims: bool = False) -> jax.Array:
    """``jnp.nanmin(x, axis)`` over split dims (see :func:`nanmax`)."""
    return _nan_extreme(x, axis, axis_name, keepdims, "min")


# -- norms --------------------------------------------------------------------------------------------


def _max(v: jax.Array, axes: tuple[int, ...], axis_name: AxisName, kind: str) -> jax.Array:
    """max (min) over ``axes``, keeping them, across ``axis_name`` too (ties share the gradient)."""
    from meshify.runtime import ops

    if _named(axis_name):
        return getattr(ops, kind)(v, axes, axis_name, keepdims=True)
    return getattr(jnp, kind)(v, axis=axes, keepdims=True)


def norm(x: jax.Array, ord, axis: Axis | None, axis_name: AxisName, keepdims: bool = False,
         inexact: bool = True) -> jax.Array:
    """``jnp.linalg.norm(x, ord, axis)``, a vector norm (one axis, or every axis with ``ord=None``)
    over dims split across ``axis_name``; ``inexact`` False: ``jnp.linalg.vector_norm``'s, which keeps an
    integer array's dtype (ord 1, inf, -inf)."""
    if inexact:
        x = x.astype(jnp.result_type(x, 1.0))
    axes = _axes(axis, x.ndim)
    if ord is None or ord == 2:
        out = jnp.sqrt(_summed(jnp.real(x * jnp.conj(x)), axes, axis_name))
    elif ord == np.inf:
        out = jnp.maximum(_max(jnp.abs(x), axes, axis_name, "max"), jnp.zeros((), jnp.abs(x).dtype))
    elif ord == -np.inf:
        out = _max(jnp.abs(x), axes, axis_name, "min")
    elif ord == 0:
        out = _psum(jnp.sum(x != 0, dtype=jnp.finfo(x.dtype).dtype, axis=axes, keepdims=True), axis_name)
    elif ord == 1:
        out = _summed(jnp.abs(x), axes, axis_name)
    elif isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    else:
        abs_x = jnp.abs(x)
        p = jnp.asarray(ord, abs_x.dtype)
        out = jnp.power(_summed(abs_x ** p, axes, axis_name), jnp.reciprocal(p))  # (as JAX: of an int p, an int)
    return _squeeze(out, axes, keepdims)


def _summed(v: jax.Array, axes: tuple[int, ...], axis_name: AxisName) -> jax.Array:
    """The sum of ``v`` over ``axes`` split across ``axis_name`` (kept), rounded once as one device's
    ``jnp.sum`` rounds it: float16/bfloat16 summed in float32 across the devices too, then cast back."""
    wide = jnp.float32 if v.dtype in (jnp.float16, jnp.bfloat16) else None
    return _psum(jnp.sum(v, axis=axes, keepdims=True, dtype=wide), axis_name).astype(v.dtype)


def matrix_norm(x: jax.Array, ord, axis: tuple[int, int], row_axes: AxisName, col_axes: AxisName,
                keepdims: bool = False) -> jax.Array:
    """``jnp.linalg.norm(x, ord, axis=(row, col))`` for ``ord`` None/'fro'/1/-1/inf/-inf, the row dim
    split over ``row_axes`` and the column dim over ``col_axes`` (either may be ``()``)."""
    x = x.astype(jnp.result_type(x, 1.0))
    row, col = _axes(axis, x.ndim)
    both = tuple(a for names in (row_axes, col_axes) if _named(names)
                 for a in (names if isinstance(names, tuple) else (names,)))
    if ord is None or ord in ("f", "fro"):
        out = jnp.sqrt(_psum(jnp.sum(jnp.real(x * jnp.conj(x)), axis=(row, col), keepdims=True), both))
        return _squeeze(out, (row, col), keepdims)
    if ord in (1, -1):
        summed, along, names = (row, row_axes), col, col_axes
    elif ord in (np.inf, -np.inf):
        summed, along, names = (col, col_axes), row, row_axes
    else:
        raise ValueError(f"meshify's sharded matrix norm does not compute ord={ord!r}")
    sums = _psum(jnp.sum(jnp.abs(x), axis=summed[0], keepdims=True), summed[1])
    if ord in (1, np.inf):
        out = jnp.maximum(_max(sums, (along,), names, "max"), jnp.zeros((), sums.dtype))
    else:
        out = _max(sums, (along,), names, "min")
    return _squeeze(out, (row, col), keepdims)


# -- prod -----------------------------------------------------------------------------------------------


def prod(x: jax.Array, axis: Axis | None, axis_name: AxisName, keepdims: bool = False, dtype=None,
         where=None, initial=None, promote_integers: bool = True) -> jax.Array:
    """``jnp.prod(x, axis)`` over dims split across ``axis_name``: the local products of every device
    all-gathered and multiplied (exact for zeros, signs, inf and NaN; no logarithms)."""
    from meshify.runtime.ops import all_gather

    axes = _axes(axis, x.ndim)
    local = jnp.prod(x, axis=axes, dtype=dtype, keepdims=True, where=where, promote_integers=promote_integers)
    gathered = all_gather(local[None], axis_name, axis=0)
    out = jnp.prod(gathered, axis=0, dtype=local.dtype, initial=initial)
    return _squeeze(out, axes, keepdims)


# -- argmax / argmin ----------------------------------------------------------------------------------


def _key(x: jax.Array, kind: str) -> jax.Array:
    """Integers ordered as ``jnp.argmax``/``argmin`` order ``x``: NaN above (below) everything,
    ``-0.0`` equal to ``0.0``; an integer ``x`` is its own key."""
    if x.dtype == jnp.bool_:
        return x.astype(jnp.int32)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return x
    width = jnp.dtype(x.dtype).itemsize * 8
    ints = {16: jnp.int16, 32: jnp.int32, 64: jnp.int64}[width]
    zero = jnp.zeros((), x.dtype)
    bits = jax.lax.bitcast_convert_type(jnp.where(x == zero, zero, x), ints)  # -0.0 is 0.0
    flip = jnp.asarray((1 << (width - 1)) - 1, ints)
    key = jnp.where(bits < 0, bits ^ flip, bits)
    info = jnp.iinfo(ints)
    return jnp.where(jnp.isnan(x), jnp.asarray(info.max if kind == "max" else info.min, ints), key)


def _arg(x: jax.Array, axis: int | None, axis_name: AxisName, split: int | tuple[int, ...], keepdims: bool,
         kind: str, blocks: tuple[AxisName, ...] | None = None) -> jax.Array:
    key = _key(x, kind)
    local = (jnp.argmax if kind == "max" else jnp.argmin)(key, axis=axis, keepdims=True)
    best = jnp.take_along_axis(key, local, axis=axis) if axis is not None else key.reshape(-1)[local.reshape(())]
    if axis is not None:
        assert isinstance(split, int)
        offset = jax.lax.axis_index(axis_name) * x.shape[split]
        index = local + offset.astype(local.dtype)
    else:  # a flat index into the whole array: this block's multi-index, moved by its offsets
        dims, names = ((split,), (axis_name,)) if isinstance(split, int) else (split, blocks)
        assert names is not None and len(names) == len(dims)
        position = list(jnp.unravel_index(local.reshape(()), x.shape))
        shape = list(x.shape)
        for dim, name in zip(dims, names):
            position[dim] = position[dim] + jax.lax.axis_index(name) * x.shape[dim]
            shape[dim] *= jax.lax.axis_size(name)
        index = jnp.ravel_multi_index(tuple(position), shape, mode="clip").astype(local.dtype).reshape(local.shape)
    whole = (jax.lax.pmax if kind == "max" else jax.lax.pmin)(best, axis_name)
    first = jax.lax.pmin(jnp.where(best == whole, index, jnp.iinfo(index.dtype).max), axis_name)
    if keepdims:
        return first
    return first.reshape(()) if axis is None else jnp.squeeze(first, axis)


def argmax(x: jax.Array, axis: int | None, axis_name: AxisName, split: int | tuple[int, ...],
           keepdims: bool = False, blocks: tuple[AxisName, ...] | None = None) -> jax.Array:
    """``jnp.argmax(x, axis)`` where dim ``split`` (the reduced one, or with ``axis=None`` a split dim) is split
    over ``axis_name``: the first global index of the max (NaN counts as the max).  With ``axis=None`` and
    several split dims, ``split`` names them and ``blocks`` the mesh axes of each (``axis_name``: all of them)."""
    return _arg(x, axis, axis_name, split, keepdims, "max", blocks)


def argmin(x: jax.Array, axis: int | None, axis_name: AxisName, split: int | tuple[int, ...],
           keepdims: bool = False, blocks: tuple[AxisName, ...] | None = None) -> jax.Array:
    """``jnp.argmin``, as :func:`argmax` (NaN counts as the min)."""
    return _arg(x, axis, axis_name, split, keepdims, "min", blocks)


# -- any / all ----------------------------------------------------------------------------------------------


def any(x: jax.Array, axis: Axis | None, axis_name: AxisName, keepdims: bool = False, where=None) -> jax.Array:
    """``jnp.any(x, axis)`` over dims split across ``axis_name``: local any, an all-reduce max."""
    axes = _axes(axis, x.ndim)
    local = jnp.any(x, axis=axes, keepdims=keepdims, where=where)
    return jax.lax.pmax(local.astype(jnp.int32), axis_name).astype(jnp.bool_)


def all(x: jax.Array, axis: Axis | None, axis_name: AxisName, keepdims: bool = False, where=None) -> jax.Array:
    """``jnp.all(x, axis)`` over dims split across ``axis_name``: local all, an all-reduce min."""
    axes = _axes(axis, x.ndim)
    local = jnp.all(x, axis=axes, keepdims=keepdims, where=where)
    return jax.lax.pmin(local.astype(jnp.int32), axis_name).astype(jnp.bool_)


# -- cumsum / cumprod ---------------------------------------------------------------------------------------


def _scan(x: jax.Array, axis: int, axis_name: AxisName, dtype, kind: str) -> jax.Array:
    from meshify.runtime.ops import all_gather

    axis = axis % x.ndim
    local = (jnp.cumsum if kind == "sum" else jnp.cumprod)(x, axis=axis, dtype=dtype)
    size = local.shape[axis]
    total = jax.lax.slice_in_dim(local, size - 1, size, axis=axis)
    totals = all_gather(total[None], axis_name, axis=0)
    n = totals.shape[0]
    before = (jnp.arange(n) < jax.lax.axis_index(axis_name)).reshape((n,) + (1,) * total.ndim)
    if kind == "sum":
        return local + jnp.sum(jnp.where(before, totals, jnp.zeros((), local.dtype)), axis=0, dtype=local.dtype)
    return local * jnp.prod(jnp.where(before, totals, jnp.ones((), local.dtype)), axis=0, dtype=local.dtype)


def cumsum(x: jax.Array, axis: int, axis_name: AxisName, dtype=None) -> jax.Array:
    """``jnp.cumsum(x, axis)`` along a dim split over ``axis_name``: the local cumsum plus the sum of
    the totals of the devices before this one (one all-gather of the totals)."""
    return _scan(x, axis, axis_name, dtype, "sum")


def cumprod(x: jax.Array, axis: int, axis_name: AxisName, dtype=None) -> jax.Array:
    """``jnp.cumprod(x, axis)`` along a dim split over ``axis_name``: the local cumprod times the
    product of the totals of the devices before this one."""
    return _scan(x, axis, axis_name, dtype, "prod")


def nancumsum(x: jax.Array, axis: int, axis_name: AxisName, dtype=None) -> jax.Array:
    """``jnp.nancumsum(x, axis)`` along a split dim: :func:`cumsum` of ``x`` with its NaNs taken for 0, as JAX."""
    return cumsum(jnp.where(jnp.isnan(x), jnp.zeros((), x.dtype), x) if _inexact(x) else x, axis, axis_name, dtype)


def nancumprod(x: jax.Array, axis: int, axis_name: AxisName, dtype=None) -> jax.Array:
    """``jnp.nancumprod(x, axis)`` along a split dim: :func:`cumprod` of ``x`` with its NaNs taken for 1."""
    return cumprod(jnp.where(jnp.isnan(x), jnp.ones((), x.dtype), x) if _inexact(x) else x, axis, axis_name, dtype)


def _inexact(x: jax.Array) -> bool:
    return bool(jnp.issubdtype(x.dtype, jnp.inexact))


def nanargmax(x: jax.Array, axis: int | None, axis_name: AxisName, split: int | tuple[int, ...],
              keepdims: bool = False, blocks: tuple[AxisName, ...] | None = None) -> jax.Array:
    """``jnp.nanargmax``: :func:`argmax` with NaNs taken for -inf, -1 where every entry is NaN (as JAX)."""
    return _nanarg(x, axis, axis_name, split, keepdims, blocks, "max")


def nanargmin(x: jax.Array, axis: int | None, axis_name: AxisName, split: int | tuple[int, ...],
              keepdims: bool = False, blocks: tuple[AxisName, ...] | None = None) -> jax.Array:
    """``jnp.nanargmin``: :func:`argmin` with NaNs taken for inf, -1 where every entry is NaN (as JAX)."""
    return _nanarg(x, axis, axis_name, split, keepdims, blocks, "min")


def _nanarg(x, axis, axis_name, split, keepdims, blocks, kind: str) -> jax.Array:
    if not _inexact(x):
        return _arg(x, axis, axis_name, split, keepdims, kind, blocks)
    nan = jnp.isnan(x)
    fill = jnp.asarray(-jnp.inf if kind == "max" else jnp.inf, x.dtype)
    index = _arg(jnp.where(nan, fill, x), axis, axis_name, split, keepdims, kind, blocks)
    every = jax.lax.pmin(jnp.all(nan, axis=axis, keepdims=keepdims).astype(jnp.int32), axis_name)
    return jnp.where(every.astype(bool), jnp.asarray(-1, index.dtype), index)



def _prefix(totals: jax.Array, earlier: jax.Array, kind: str) -> tuple[jax.Array, jax.Array | None]:
    """The combination of the shard totals ``earlier`` marks (the devices before this one in the scan's
    direction), and (``cumlogsumexp``) whether there is one: -inf, its identity, needs no gradient."""
    dtype = totals.dtype
    if kind == "cumsum":
        return jnp.sum(jnp.where(earlier, totals, jnp.zeros((), dtype)), axis=0, dtype=dtype), None
    if kind == "cumprod":
        return jnp.prod(jnp.where(earlier, totals, jnp.ones((), dtype)), axis=0, dtype=dtype), None
    if kind in ("cummax", "cummin"):
        from meshify.runtime.ops import _identity

        # folded with jnp.maximum (minimum), as lax.cummax combines: a NaN total passes on, without jnp.max's
        # gradient (0 / 0 where the max is NaN)
        fill, pick = _identity(dtype, kind[3:]), jnp.maximum if kind == "cummax" else jnp.minimum
        out = jnp.broadcast_to(fill, totals.shape[1:])
        for i in range(totals.shape[0]):
            out = pick(out, jnp.where(earlier[i], totals[i], fill))
        return out, None
    # cumlogsumexp: log(sum(exp)) of the earlier totals, shifted by their (constant) max; none earlier, or all
    # -inf: no log(0) (its gradient, 0 * inf, would be NaN), the local scan as it is; a NaN passes on
    peak = jax.lax.stop_gradient(jnp.max(jnp.where(earlier, totals, -jnp.inf), axis=0))
    peak = jnp.where(jnp.isfinite(peak), peak, jnp.zeros((), dtype))
    summed = jnp.sum(jnp.where(earlier, jnp.exp(totals - peak), jnp.zeros((), dtype)), axis=0)
    seen = jnp.any(earlier, axis=0) & ((summed > 0) | jnp.isnan(summed))
    return jnp.log(jnp.where(seen, summed, jnp.ones((), dtype))) + peak, seen


def cumulative(operand: jax.Array, axis: int, axis_name: AxisName, kind: str, reverse: bool = False) -> jax.Array:
    """``jax.lax.<kind>(operand, axis, reverse=reverse)`` (cumsum, cumprod, cummax, cummin, cumlogsumexp) along
    a dim split over ``axis_name``: the local scan, combined with the combination of the totals of the devices
    before this one (after it, for ``reverse``): one all-gather of each device's total."""
    from meshify.runtime.ops import all_gather

    axis = axis % operand.ndim
    local = getattr(jax.lax, kind)(operand, axis=axis, reverse=reverse)
    size = local.shape[axis]
    end = 0 if reverse else size - 1
    total = jax.lax.slice_in_dim(local, end, end + 1, axis=axis)
    totals = all_gather(total[None], axis_name, axis=0)
    n, me = totals.shape[0], jax.lax.axis_index(axis_name)
    earlier = ((jnp.arange(n) > me) if reverse else (jnp.arange(n) < me)).reshape((n,) + (1,) * total.ndim)
    prefix, seen = _prefix(totals, earlier, kind)
    if kind == "cumsum":
        return local + prefix
    if kind == "cumprod":
        return local * prefix
    if kind in ("cummax", "cummin"):
        return (jnp.maximum if kind == "cummax" else jnp.minimum)(local, prefix)
    return jnp.where(seen, jnp.logaddexp(local, prefix), local)


def associative_scan(fn, elems, reverse: bool = False, axis: int = 0, *, axis_name: AxisName):
    """``jax.lax.associative_scan(fn, elems, reverse, axis)`` along a dim split over ``axis_name`` (a linear
    recurrence's ``(a1 * a2, a2 * b1 + b2)`` over a split sequence): each device scans its block, gathers every
    block's total (one all-gather per leaf), folds the totals of the blocks before its own with ``fn`` in order
    (after it, for ``reverse``), and combines that with its scan: ``fn(prefix, local)``, as the one-device scan
    groups them (``fn`` is associative).  The first block keeps its scan.

    No ``jax.lax.cond`` (a value ``fn`` closes over, made varying inside a branch, would transpose to a psum only
    the devices taking it run): where a device does not need ``fn``'s result, it is computed and not selected,
    on inputs whose gradient is stopped (:func:`_unless`), so that its overflow cannot reach the gradient."""
    from meshify.runtime.ops import all_gather

    leaves, tree = jax.tree.flatten(elems)
    local = jax.lax.associative_scan(fn, elems, reverse=reverse, axis=axis)  # (the axis as given: JAX checks it)
    axis = axis % leaves[0].ndim
    scanned = jax.tree.leaves(local)
    end = 0 if reverse else scanned[0].shape[axis] - 1
    totals = [all_gather(jax.lax.slice_in_dim(leaf, end, end + 1, axis=axis)[None], axis_name, axis=0, varying=True)
              for leaf in scanned]
    n, me = totals[0].shape[0], jax.lax.axis_index(axis_name)
    order = list(range(n - 1, -1, -1)) if reverse else list(range(n))  # the blocks in the scan's order

    def total(i: int):
        return jax.tree.unflatten(tree, [t[i] for t in totals])

    prefix = total(order[0])  # the fold of the blocks before this one, where there is one
    for i in order[1:]:
        needed = me > i if not reverse else me < i
        prefix = _unless(needed, fn(_unless(needed, prefix), _unless(needed, total(i))), prefix)
    first = me == order[0]
    wide = jax.tree.map(lambda t, x: jnp.broadcast_to(t, x.shape), prefix, local)
    return _unless(~first, fn(_unless(~first, wide), _unless(~first, local)), local)


def _unless(needed, value, otherwise=None):
    """``value`` where ``needed``, else ``otherwise`` (a pytree each); with one argument, ``value`` whose gradient
    is stopped where it is not ``needed``: the inputs of a result not selected there."""
    if otherwise is None:
        return jax.tree.map(lambda v: jnp.where(needed, v, jax.lax.stop_gradient(v)), value)
    return jax.tree.map(lambda v, o: jnp.where(needed, v, o), value, otherwise)


# -- ptp / average ----------------------------------------------------------------------------------------


def ptp(a: jax.Array, axis: Axis | None, axis_name: AxisName, keepdims: bool = False) -> jax.Array:
    """``jnp.ptp(a, axis)`` over split dims: ``mr.max`` minus ``mr.min`` (a pmax and a pmin; NaN kept, ties
    sharing the gradient, as ``jnp.max``'s and ``jnp.min``'s)."""
    from meshify.runtime import ops

    axes = _axes(axis, a.ndim)
    return ops.max(a, axes, axis_name, keepdims=keepdims) - ops.min(a, axes, axis_name, keepdims=keepdims)


def average(a: jax.Array, axis: Axis | None, axis_name: AxisName, weights: jax.Array | None = None,
            returned: bool = False, keepdims: bool = False):
    """``jnp.average(a, axis, weights, returned, keepdims)`` over split dims: the local (weighted) sum and the
    local sum of the weights (or count), both summed over the devices (in float32 for float16/bfloat16, as
    ``jnp.sum`` adds them), then divided.  ``weights``: a's block, or the 1-d block along the one dim averaged."""
    from meshify.runtime.ops import varying

    axes = _axes(axis, a.ndim)
    if weights is None:
        dtype = a.dtype if jnp.issubdtype(a.dtype, jnp.inexact) else jnp.zeros((), float).dtype
        wide = jnp.dtype(jnp.float32) if dtype in (jnp.float16, jnp.bfloat16) else jnp.dtype(dtype)
        total = _psum(jnp.sum(a, axes, dtype=wide, keepdims=keepdims), axis_name)
        count = math.prod(a.shape[d] for d in axes) * _shards(axis_name)
        avg = jax.lax.div(total, jnp.asarray(count, wide)).astype(dtype)
        scale = jnp.full(avg.shape, count, avg.dtype)
    else:
        dtype = jnp.result_type(a.dtype, weights.dtype)
        dtype = dtype if jnp.issubdtype(dtype, jnp.inexact) else jnp.zeros((), float).dtype
        a, weights = a.astype(dtype), weights.astype(dtype)
        if weights.shape != a.shape:  # 1-d weights along the one dim averaged
            weights = jnp.reshape(weights, tuple(n if i in axes else 1 for i, n in enumerate(a.shape)))
        wide = jnp.dtype(jnp.float32) if dtype in (jnp.float16, jnp.bfloat16) else jnp.dtype(dtype)
        sums = (jnp.sum(a * weights, axes, dtype=wide, keepdims=keepdims),
                jnp.sum(jnp.broadcast_to(weights, a.shape), axes, dtype=wide, keepdims=keepdims))
        total, scale = jax.lax.psum(tuple(varying(v, axis_name) for v in sums), axis_name)
        scale = scale.astype(dtype)
        avg = total.astype(dtype) / scale
    return (avg, jnp.broadcast_to(scale, avg.shape)) if returned else avg


# -- top_k --------------------------------------------------------------------------------------------------


def top_k(x: jax.Array, k: int, axis: int, axis_name: AxisName) -> list[jax.Array]:
    """``jax.lax.top_k(x, k, axis=axis)`` along a dim split over ``axis_name``: each device's own top
    ``min(k, block)`` with their global indices, both all-gathered (``shards * min(k, block)`` candidates
    per row, the whole dim where ``k`` reaches a block), then the top ``k`` of those.  Exact, ties
    included: a lower global index comes first, as in ``top_k`` (the candidates are ordered by block,
    then by their order within it)."""
    from meshify.runtime.ops import all_gather

    axis = axis % x.ndim
    size = x.shape[axis]
    values, indices = jax.lax.top_k(x, min(k, size), axis=axis)
    indices = indices + (jax.lax.axis_index(axis_name) * size).astype(indices.dtype)
    values, indices = all_gather(values, axis_name, axis=axis), all_gather(indices, axis_name, axis=axis)
    best, picked = jax.lax.top_k(values, k, axis=axis)
    return [best, jnp.take_along_axis(indices, picked, axis=axis)]  # (a list, as jax.lax.top_k's)


# -- segment max / min ---------------------------------------------------------------------------------------


def segment_max(data: jax.Array, segment_ids: jax.Array, num_segments: int, axis_name: AxisName,
                **options) -> jax.Array:
    """``jax.ops.segment_max(data, segment_ids, num_segments)`` of rows split over ``axis_name`` (a graph's edges
    split across devices): each device's segment maxima, then their max across devices.  Its derivative shares
    a segment's tangent among all rows holding its max on all devices, as JAX's does on one device (the max of
    per-device maxima would share it per device first)."""
    return _segment_extreme(data, segment_ids, num_segments, axis_name, "max", tuple(sorted(options.items())))


def segment_min(data: jax.Array, segment_ids: jax.Array, num_segments: int, axis_name: AxisName,
                **options) -> jax.Array:
    """``jax.ops.segment_min``, as :func:`segment_max`."""
    return _segment_extreme(data, segment_ids, num_segments, axis_name, "min", tuple(sorted(options.items())))


def _segment_local(data, segment_ids, num_segments, axis_name, kind, options):
    local = (jax.ops.segment_max if kind == "max" else jax.ops.segment_min)(data, segment_ids, num_segments,
                                                                             **dict(options))
    whole = (jax.lax.pmax if kind == "max" else jax.lax.pmin)(local, axis_name)
    if not jnp.issubdtype(local.dtype, jnp.inexact):
        return whole
    # a segment holding a NaN is NaN, as on one device; an all-reduce max/min drops NaNs: carry them apart
    nan = jax.lax.pmax(jnp.isnan(local).astype(local.dtype), axis_name)
    return jnp.where(nan > 0, jnp.asarray(jnp.nan, local.dtype), whole)


@functools.partial(jax.custom_jvp, nondiff_argnums=(2, 3, 4, 5))
def _segment_extreme(data, segment_ids, num_segments, axis_name, kind, options):
    return _segment_local(data, segment_ids, num_segments, axis_name, kind, options)


@_segment_extreme.defjvp
def _segment_extreme_jvp(num_segments, axis_name, kind, options, primals, tangents):
    data, segment_ids = primals
    t = tangents[0]
    out = _segment_extreme(data, segment_ids, num_segments, axis_name, kind, options)  # (a second derivative too)
    valid = (segment_ids >= 0) & (segment_ids < num_segments)
    picked = jnp.take(out, jnp.clip(segment_ids, 0, num_segments - 1), axis=0)
    hit = ((data == picked) & valid.reshape(valid.shape + (1,) * (data.ndim - valid.ndim))).astype(t.dtype)
    options = dict(options)
    options.pop("unique_indices", None)  # (the sums below add several rows into one segment)
    total = jax.lax.psum(jax.ops.segment_sum(t * hit, segment_ids, num_segments, **options), axis_name)
    count = jax.lax.psum(jax.ops.segment_sum(hit, segment_ids, num_segments, **options), axis_name)
    # (as JAX's scatter max: where the result is the fill value itself, -inf for a max, the fill counts as one
    # more row holding it)
    fill = -jnp.inf if kind == "max" else jnp.inf
    count = count + (out == fill).astype(count.dtype)
    return out, jnp.where(count > 0, total / jnp.where(count > 0, count, 1), 0).astype(out.dtype)
