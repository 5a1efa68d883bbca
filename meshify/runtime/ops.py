"""Local building blocks that generated code calls inside ``jax.shard_map``.

Each one is what a reviewer would write by hand; the rewriter emits a call with a
comment saying why.  Axis names are a mesh axis or a tuple of them (major first).
"""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp

__all__ = ["regather_policy", "regathering", "entries", "like", "shard_size", "call_block", "kept_size", "sum_dtype", "psum", "psum_scatter", "all_gather", "local_block", "grouped_kv", "debug_print", "dynamic_slice", "dynamic_slice_in_dim", "dynamic_update_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_index_in_dim", "take", "take_along_axis", "rows_at", "scatter", "one_hot", "pmax", "pmin", "max", "min", "mean", "on_one_device", "promoted", "softmax",
           "log_softmax", "logsumexp", "global_shape", "elementwise", "dtype_of",
           "canonical_dtype", "quotient_dtype", "joined_dtype", "refused", "global_norm"]

AxisName = str | tuple[str, ...]


def local_block(x: jax.Array, axis: int, axis_name: AxisName) -> jax.Array:
    """This device's block of ``x`` along ``axis``, split over ``axis_name``: a free local slice."""
    n = jax.lax.axis_size(axis_name)
    if x.shape[axis] % n:
        from meshify.errors import CallError

        raise CallError(f"cannot split axis {axis} of a {list(x.shape)} array over mesh axis {axis_name!r}: its size "
                        f"{x.shape[axis]} is not a multiple of the {n} devices",
                        fix="make that dim's size a multiple of the mesh axis (a head count, a reshape size), or map "
                            "the dim to a smaller mesh axis in the layout rules")
    size = x.shape[axis] // n
    start = jax.lax.axis_index(axis_name) * size
    return jax.lax.dynamic_slice_in_dim(x, start, size, axis)


def grouped_kv(kv: jax.Array, query: jax.Array, axis_name: AxisName) -> jax.Array:
    """The kv heads (dim -2, whole on every device) that this device's query heads read in grouped-query
    attention whose query heads (``query``'s dim -2, this device's block) are split over ``axis_name``.

    Query head ``h`` reads kv head ``h // group`` (``group`` = query heads / kv heads, as
    ``jax.nn.dot_product_attention`` groups them).  Where a device holds whole groups, its block of kv heads;
    where a group spans devices (fewer kv heads than devices: multi-query attention, 2 kv heads on 4 devices),
    the one kv head its query heads share; where its query heads read parts of two groups (3 query heads a device
    in groups of 2), the kv head of each query head (as many kv heads as query heads).  Local either way, no
    communication; the gradient of a kv head is summed over the devices that read it, as JAX sums a whole value
    used on every device."""
    from meshify.errors import CallError

    n = jax.lax.axis_size(axis_name)
    local, kv_heads = query.shape[-2], kv.shape[-2]
    heads = local * n
    if kv_heads == 0 or heads % kv_heads:
        raise CallError(f"grouped-query attention with {heads} query heads and {kv_heads} kv heads: the query "
                        "heads must be a multiple of the kv heads", fix="give the kv heads a divisor of the query heads")
    group = heads // kv_heads
    if local % group == 0:  # whole groups on each device: its block of kv heads
        size = local // group
        start = jax.lax.axis_index(axis_name) * size
    elif group % local == 0:  # a group spans devices: the one kv head this device's query heads share
        size = 1
        start = jax.lax.axis_index(axis_name) * local // group
    else:  # a device's query heads read parts of two groups: the kv head of each of them, one per query head
        mine = jax.lax.axis_index(axis_name) * local + jnp.arange(local)
        return jnp.take(kv, mine // group, axis=kv.ndim - 2)
    return jax.lax.dynamic_slice_in_dim(kv, start, size, kv.ndim - 2)


def dynamic_slice(operand: jax.Array, start_indices, slice_sizes, *, allow_negative_indices=True,
                  axis_names: Sequence[AxisName | None] | None = None) -> jax.Array:
    """``jax.lax.dynamic_slice``, its start indices clamped here as JAX clamps them.  A slice of this
    slice along a dim it reads (``local_block`` splitting the result) is folded by XLA into one slice
    clamped to the outer one's bounds, which drops the inner clamping: a start past ``size - n`` (or a
    negative one) would read other rows.

    ``axis_names``: per dim, the mesh axes it is split over (None: unsplit); the window along a split dim
    is read as :func:`dynamic_slice_in_dim` reads it (a partial sum over those axes)."""
    split = list(axis_names) if axis_names is not None else [None] * operand.ndim
    allows = _each(allow_negative_indices, operand.ndim)
    starts = [0 if split[i] else _clamped(s, size, n, allow) for i, (s, size, n, allow) in
              enumerate(zip(start_indices, operand.shape, slice_sizes, allows))]
    sizes = [size if split[i] else n for i, (size, n) in enumerate(zip(operand.shape, slice_sizes))]
    out = jax.lax.dynamic_slice(operand, starts, sizes, allow_negative_indices=False)
    for i, axes in enumerate(split):
        if axes:
            out = _window_of_block(out, start_indices[i], slice_sizes[i], i, axes, allows[i])
    return out


def dynamic_slice_in_dim(operand: jax.Array, start_index, slice_size: int, axis: int = 0, *,
                         allow_negative_indices=True, axis_name: AxisName | None = None) -> jax.Array:
    """``jax.lax.dynamic_slice_in_dim``, its start clamped here (see :func:`dynamic_slice`).

    ``axis_name``: the dim is split over these mesh axes: the rows of the window (its start clamped as JAX
    clamps it in the whole dim) that fall in this device's block, zeros elsewhere, so that the result (the
    window whole) is a partial sum over ``axis_name`` that the caller completes: only the window's rows move,
    never the dim."""
    if axis_name is not None:
        return _window_of_block(operand, start_index, slice_size, axis % operand.ndim, axis_name,
                                allow_negative_indices)
    start = _clamped(start_index, operand.shape[axis], slice_size, allow_negative_indices)
    return jax.lax.dynamic_slice_in_dim(operand, start, slice_size, axis, allow_negative_indices=False)


def dynamic_update_slice_in_dim(operand: jax.Array, update: jax.Array, start_index, axis: int, *,
                                axis_name: AxisName, allow_negative_indices=True) -> jax.Array:
    """``jax.lax.dynamic_update_slice_in_dim`` along dim ``axis`` of ``operand``, split over ``axis_name``
    (``update`` whole along it): each device writes the rows of the update (placed at the start clamped in
    the whole dim, as JAX clamps it) that fall in its block, and keeps its other rows."""
    axis %= operand.ndim
    local, n = operand.shape[axis], update.shape[axis]
    total = local * jax.lax.axis_size(axis_name)
    if n > total:
        from meshify.errors import CallError

        raise CallError(f"a dynamic update of {n} rows into a dim of {total} entries (split over {axis_name!r})",
                        fix=f"write at most {total} rows (JAX's rule: the update fits in the dim)")
    if update.dtype != operand.dtype:  # (JAX's rule)
        raise TypeError(f"dynamic_update_slice update and operand dtypes must match, got {update.dtype} and "
                        f"{operand.dtype}")
    begin = _clamped(start_index, total, n, allow_negative_indices).astype(jnp.int32)
    offset = jnp.clip(_block_offset(axis_name, local) - begin, -local, n)  # the block's first row in the update
    widths = [(0, 0)] * update.ndim
    widths[axis] = (local, local)
    rows = jax.lax.dynamic_slice_in_dim(jnp.pad(update, widths), offset + local, local, axis,
                                        allow_negative_indices=False)
    shape = [1] * operand.ndim
    shape[axis] = local
    at = offset + jax.lax.broadcasted_iota(jnp.int32, tuple(shape), axis)  # each row's place in the update
    return jnp.where((at >= 0) & (at < n), rows, operand)


def _window_of_block(x: jax.Array, start, n: int, axis: int, axis_name: AxisName, allow_negative) -> jax.Array:
    """The ``n`` rows from ``start`` (clamped into the whole dim, as JAX clamps it) of dim ``axis``, split over
    ``axis_name``: the rows this device's block holds, zeros for the others."""
    local = x.shape[axis]
    total = local * jax.lax.axis_size(axis_name)
    if not 0 <= n <= total:
        from meshify.errors import CallError

        raise CallError(f"a dynamic slice of {n} rows of a dim of {total} entries (split over {axis_name!r})",
                        fix=f"read at most {total} rows (JAX's rule: the slice fits in the dim)")
    begin = _clamped(start, total, n, allow_negative).astype(jnp.int32)
    offset = jnp.clip(begin - _block_offset(axis_name, local), -n, local)  # where the window starts in the block
    widths = [(0, 0)] * x.ndim
    widths[axis] = (n, n)  # zeros either side: the rows of the window outside the block
    return jax.lax.dynamic_slice_in_dim(jnp.pad(x, widths), offset + n, n, axis, allow_negative_indices=False)


def _integer_index(index: jax.Array) -> None:
    """JAX's check of a dynamic slice's position: an integer (a float or a bool is a TypeError there too)."""
    if not jnp.issubdtype(index.dtype, jnp.integer):
        raise TypeError(f"index arguments to dynamic_slice must be integers of the same type, got: {index.dtype}")


def _held_index(index, size: int, local: int, axis_name: AxisName, allow_negative) -> tuple[jax.Array, jax.Array]:
    """Where a one-entry dynamic slice at ``index`` of a dim of ``size`` split over ``axis_name`` (``local``
    entries per device) falls in this device's block, and whether it does: the index read as JAX reads it
    (from the end where negative, if allowed; then clamped into the dim)."""
    # (not widened first: JAX reads an int8 index from the end of a longer dim in int8, wrapping; so does _clamped)
    global_index = _clamped(index, size, 1, allow_negative).astype(jnp.int32)
    shifted = global_index - _block_offset(axis_name, local)
    mine = (shifted >= 0) & (shifted < local)
    return jnp.where(mine, shifted, 0), mine


def dynamic_index_in_dim(operand: jax.Array, index, axis: int = 0, keepdims: bool = True, *, axis_name: AxisName,
                         allow_negative_indices: bool = True) -> jax.Array:
    """``jax.lax.dynamic_index_in_dim`` along a dim split over ``axis_name``: the device holding the entry reads
    it, the others give zeros, so the result is a partial sum over ``axis_name`` (the caller completes it).  The
    index is clamped as JAX clamps it, and the entry read gets the gradient (as JAX's slice gives it)."""
    local = operand.shape[axis]
    at, mine = _held_index(index, local * jax.lax.axis_size(axis_name), local, axis_name, allow_negative_indices)
    found = jax.lax.dynamic_index_in_dim(operand, at, axis, keepdims, allow_negative_indices=False)
    return jnp.where(mine, found, jnp.zeros((), found.dtype))


def dynamic_update_index_in_dim(operand: jax.Array, update, index, axis: int, *, axis_name: AxisName,
                                allow_negative_indices: bool = True) -> jax.Array:
    """``jax.lax.dynamic_update_index_in_dim`` along a dim split over ``axis_name``: the device whose block
    holds the (clamped) index writes the update there, the others keep their blocks."""
    local = operand.shape[axis]
    at, mine = _held_index(index, local * jax.lax.axis_size(axis_name), local, axis_name, allow_negative_indices)
    written = jax.lax.dynamic_update_index_in_dim(operand, update, at, axis, allow_negative_indices=False)
    return jnp.where(mine, written, operand)


def _each(allow, rank: int) -> Sequence:
    return [allow] * rank if isinstance(allow, bool) else list(allow)


def _clamped(start, size: int, n: int, allow_negative) -> jax.Array:
    """A dynamic slice's start as JAX reads it: from the end where negative (if allowed), then clamped to
    ``[0, size - n]``."""
    start = jnp.asarray(start)
    _integer_index(start)
    if allow_negative is not False and jnp.issubdtype(start.dtype, jnp.signedinteger):
        # as JAX does: the size converted to the start's dtype (256 wraps to 0 in int8), added in that dtype
        wrapped = start + jax.lax.convert_element_type(size, start.dtype)
        start = jnp.where(jnp.logical_and(allow_negative, start < 0), wrapped, start)
    # XLA clamps exactly, whatever the start's dtype: in int32 where size - n would not fit a narrower one
    return jnp.clip(start.astype(jnp.int32) if start.dtype.itemsize < 4 else start, 0, size - n)


def entries(x, dims: Sequence[str | None], shards: Sequence[int], like=None):
    """``x``, this device's block of an array whose shape the code spells out (``jnp.arange(4.0)``) and
    which meshify lined up with named dims by position, checked while tracing against the block of
    those dims' sizes in this call: a block of one entry would broadcast where, on one device, the
    whole array does not (its size differing from the dim's).  ``like``: the array it meets, whose blocks tell
    the sizes of dims the call's arguments do not (the function made them: a resize's, a concatenation's)."""
    from meshify.runtime._bind import CALL_SIZES

    sizes = CALL_SIZES.get() or {}
    for i, (dim, n) in enumerate(zip(dims, shards)):
        j = i + jnp.ndim(like) - x.ndim if like is not None else -1  # (the partner's dim it lines up with)
        if dim is not None and dim not in sizes and n > 1 and 0 <= j < jnp.ndim(like):
            if x.shape[i] != jnp.shape(like)[j]:  # blocks of the array it meets: the whole sizes differ alike
                from meshify.errors import CallError

                raise CallError(f"an array has {x.shape[i] * n} entries along dim {dim!r}, which has "
                                f"{jnp.shape(like)[j] * n} in the array it meets: on one device the two do not "
                                "broadcast", fix=f"give it {jnp.shape(like)[j] * n} entries there (or 1 to broadcast)")
            continue
        if dim is not None and dim not in sizes and n > 1:
            from meshify.errors import CallError

            # (a dim the function makes itself: a reshape's, a split's sections): a block of one entry would
            # broadcast where, on one device, the whole array does not, and nothing here tells its size
            raise CallError(f"an array of {x.shape[i] * n} entries along dim {dim!r}, split over {n} devices: this "
                            f"call's arguments do not tell {dim!r}'s size, so meshify cannot check that the two "
                            "broadcast as on one device",
                            fix="build the array from the one it meets (jnp.zeros_like(t), jnp.ones(t.shape)), or "
                                "pass it as a hinted argument")
        if dim is not None and dim in sizes and x.shape[i] * n != sizes[dim]:
            from meshify.errors import CallError

            raise CallError(f"an array has {x.shape[i] * n} entries along dim {dim!r}, whose size is "
                            f"{sizes[dim]} in this call: on one device the two do not broadcast",
                            fix=f"give it {sizes[dim]} entries there (or 1 to broadcast)")
    return x


#: Float types whose partial sums are added in float32, as ``jnp.sum`` accumulates them.
_LOW_PRECISION = (jnp.float16, jnp.bfloat16)


def like(x: jax.Array, like=None) -> jax.ShapeDtypeStruct:
    """``x``'s shape and dtype only, for ``jnp.zeros_like``/``full_like``: the result does not vary
    over the mesh axes ``x`` is a partial sum over (JAX's replication check sees that).  ``like``:
    the values whose dtype ``x`` has on one device, where ``x`` is a partial sum formed in float32
    for float16/bfloat16 operands (as the psum completing it casts back)."""
    if like is None:
        return jax.ShapeDtypeStruct(x.shape, x.dtype)
    target = _promoted(like)
    return jax.ShapeDtypeStruct(x.shape, target if target in _LOW_PRECISION else x.dtype)


def shard_size(size: int, shards: int, dim: str, major_of: str | None = None) -> int:
    """The per-device size of ``dim`` in a reshape, whose global ``size`` is known only at trace time
    (``major_of``: the split dim that ``dim`` is the major part of, ``kv_features`` for ``kv_heads``)."""
    if not isinstance(size, int) or size % shards:
        from meshify.errors import CallError

        if major_of is not None:
            raise CallError(f"reshape size {size!r} of dim {dim!r}, the major part of {major_of!r}, is not divisible "
                            f"by the {shards} shards {major_of!r} is split into (fewer parts than devices: kv heads "
                            "in grouped-query attention, groups in a group norm)",
                            fix=f"keep {major_of!r} whole on each device: rules={{{major_of!r}: None}} (each "
                                f"device then computes all of them), or make {dim!r} a multiple of {shards}; with "
                                "one kv head (multi-query attention), leave the grouping reshape out and let the "
                                "kv head broadcast over the split heads: jnp.einsum('blhd,bsd->bhls', q, k[:, :, 0])"
                                + (f"; with one head ({dim!r} of size 1), write the 1 where meshify reads it when "
                                   "rewriting, a literal passed to the helper (attention(x, context, p, 1)) or in "
                                   "the reshape (t.reshape(b, -1, 1, t.shape[-1])): a dim of size 1 takes no split, "
                                   "the head's features take it" if size == 1 else ""))

        raise CallError(f"reshape size {size!r} of dim {dim!r} is not divisible by the {shards} shards it is split "
                        "into", fix=f"choose a size of {dim!r} that is a multiple of {shards}, or map {dim!r} to "
                                    "fewer devices (layout rules)")
    return size // shards


def _call_size(dim: str, what: str, fix: str) -> int:
    """``dim``'s size in this call (its arguments tell it), or a :class:`~meshify.errors.CallError` saying that
    ``what`` needs it."""
    from meshify.runtime._bind import CALL_SIZES

    size = (CALL_SIZES.get() or {}).get(dim)
    if size is None:
        from meshify.errors import CallError

        raise CallError(f"{what} split dim {dim!r}, whose size this call's arguments do not tell, so meshify cannot "
                        "check that the reshape keeps that dim", fix=fix)
    return size


def call_block(dim: str, shards: int) -> int:
    """The per-device size of ``dim``, whose size this call's arguments tell: what a reshape's trailing -1 that keeps
    a split ``dim`` is on each device (see ``_trailing_rest`` in meshify/rewrite/rules/shapes.py)."""
    size = _call_size(dim, "a reshape's trailing -1 keeps",
                      f"spell the size out: read it off an array that has {dim!r} (t.shape[-1])")
    return shard_size(size, shards, dim)


def kept_size(size, dim: str, shards: int) -> int:
    """``size`` of a reshape that meshify took for split ``dim``'s (the last of a group of dims it merges, see
    ``_split_tails`` in meshify/rewrite/rules/shapes.py), per device: checked against ``dim``'s size in this call,
    as another size would merge rows of ``dim`` with others."""
    whole = _call_size(dim, f"a reshape size {size!r} taken for",
                       f"read the size off an array that has {dim!r} (t.shape[i]), or hint the result's dims")
    if size != whole:
        from meshify.errors import CallError

        raise CallError(f"a reshape size {size!r} where meshify kept split dim {dim!r} ({whole} in this call): the "
                        "reshape merges that dim with others, which its blocks cannot do",
                        fix=f"keep {dim!r} as a dim of its own in the reshape (size {whole}), or map it to no mesh "
                            "axis")
    return shard_size(size, shards, dim)


def kept_dims(x, kept: tuple[tuple[int, int], ...], sizes: tuple[int, ...], shards: tuple[int, ...], reshape: str,
              dims: tuple[str, ...] = (), rest: bool = False):
    """``x``, whose whole dims meshify took a reshape's ``sizes`` (the user's, one may be -1) to keep, pairs ``kept``
    (dim of ``x``, size), as the sizes of the split dim after them say nothing on their own
    (``win.reshape(n, WS * WS, 3, H, D)`` of [windows, tok, qkv_features] with the features split: is ``WS * WS``
    the tokens?): checked against ``x``'s sizes in this call (``shards``: how many blocks each dim is in), as
    another size would merge rows of those dims with the split one's (see ``_whole_leads`` in
    meshify/rewrite/rules/shapes.py).  With ``rest``, the last pair is a trailing -1 taken to keep the split last
    dim (``_trailing_rest``).  ``dims``: ``x``'s dims by name, for the message."""
    whole = [size * n for size, n in zip(x.shape, shards)]
    known = math.prod(s for s in sizes if s != -1)
    for k, (axis, at) in enumerate(kept):
        size = sizes[at] if sizes[at] != -1 else (math.prod(whole) // known if known else -1)
        if size != whole[axis]:
            from meshify.errors import CallError

            trailing = rest and k == len(kept) - 1
            raise CallError(_kept_message(reshape, sizes[at], size, axis, whole[axis], dims, trailing),
                            fix=_kept_fix(axis, dims, shards, trailing))
    return x


def _kept_message(reshape: str, given: int, size: int, axis: int, whole: int, dims: tuple[str, ...],
                  trailing: bool) -> str:
    spelled = f"{size!r}" if given != -1 else f"-1 ({size!r})"
    named = f" ({dims[axis]!r})" if axis < len(dims) else ""
    why = ("a dim split over the mesh enters a merge only as its major part, so the -1 can only keep it"
           if trailing else "as a dim split over the mesh comes after it")
    what = ("the reshape cuts that split dim with the sizes before it" if trailing
            else "the reshape merges or splits that dim with the split one")
    return (f"in {reshape!r}, reshape size {spelled} keeps dim {axis}{named} of the array reshaped (meshify took "
            f"it so, {why}), which is {whole} in this call: {what}, which its blocks cannot do")


def _kept_fix(axis: int, dims: tuple[str, ...], shards: tuple[int, ...], trailing: bool) -> str:
    split = axis if trailing else next((i for i in range(axis + 1, len(shards)) if shards[i] > 1), None)
    unsplit = (f"map {dims[split]!r} to no mesh axis (rules={{{dims[split]!r}: None}})"
               if split is not None and split < len(dims) else "map the split dim to no mesh axis")
    read = ("read the sizes of the dims the reshape keeps before it off the array (t.shape[0], ...)" if trailing
            else f"read the size off the array (t.shape[{axis}]) if it keeps that dim")
    return f"{read}, or name the result's dims with an annotated assignment, or {unsplit}"


def _promoted(like) -> jnp.dtype:
    """The dtype values like these promote to, as ``jnp.result_type``; ``like`` is one value or a tuple of
    them, and a value that is a Python list or tuple of numbers (``cfg.weights`` passed to ``jnp.asarray``)
    counts as the array JAX makes of it."""
    values = like if isinstance(like, tuple) else (like,)
    # (a list of arrays, as jax.tree.leaves gives: the dtype they promote to together)
    return jnp.result_type(*(v for value in values for v in (
        (jnp.asarray(value),) if isinstance(value, list | tuple) and not builtins.any(  # (this module's any: mr.any)
            isinstance(x, jax.Array) for x in value) else jax.tree.leaves(value) if isinstance(value, list | tuple)
        else (value,))))


def sum_dtype(*like) -> jnp.dtype | None:
    """The dtype a partial sum of values like these is formed in: float32 where they promote to
    float16/bfloat16 (as ``jnp.sum`` and ``x @ w`` accumulate on one device), else None (jnp's own).

    The generated code passes it as ``dtype=`` / ``preferred_element_type=`` of the local sum or
    contraction whose result is a partial sum; the psum completing it casts back (``like=``).
    """
    return jnp.dtype(jnp.float32) if _promoted(like) in _LOW_PRECISION else None


def canonical_dtype(kind) -> jnp.dtype:
    """A Python type as a dtype (``float``: float32 with 64-bit off), strong where ``jnp.result_type``
    takes the type itself as weak: what ``x.astype(float)`` gives."""
    return jax.dtypes.canonicalize_dtype(kind)


def quotient_dtype(*like) -> jnp.dtype:
    """The dtype of ``a / b`` for values like these: their promoted dtype, or the default float where
    that is an integer (``jnp.arange(24) / 24`` is float32)."""
    kind = _promoted(like)
    return kind if jnp.issubdtype(kind, jnp.inexact) else jax.dtypes.canonicalize_dtype(float)


def joined_dtype(*items) -> jnp.dtype:
    """The dtype of ``jnp.stack``/``jnp.array`` of partial sums formed in float32, each item given as the values
    its dtype is read from (a value or a tuple of them, as ``like=``): their promoted dtype.  A
    :class:`~meshify.errors.CallError` where a float16/bfloat16 item would be promoted to another dtype: one
    device rounds that item to its own dtype first, which one psum of the joined sums cannot do."""
    dtypes = [_promoted(item) for item in items]
    target = jnp.result_type(*dtypes)
    rounded = sorted({str(d) for d in dtypes if d in _LOW_PRECISION and d != target})
    if rounded:
        from meshify.errors import CallError

        raise CallError(f"a join (jnp.stack, jnp.array, jnp.concatenate) of partial sums of {', '.join(rounded)} "
                        f"and {target} items: one device rounds each item to its own dtype before promoting it, "
                        f"which the sum meshify completes after the join cannot do",
                        fix="cast the items to one dtype before joining them (s.astype(jnp.float32))")
    return target


def dtype_of(*like) -> jnp.dtype:
    """``x.dtype`` of a partial sum accumulated in float32 for values like these: the dtype it has once
    summed (what ``x.dtype`` is on one device)."""
    return _promoted(like)


def _cast_back(summed: jax.Array, like) -> jax.Array:
    """A completed sum formed in float32 for low-precision operands, cast to their dtype."""
    if like is None:
        return summed
    target = _promoted(like)
    return summed.astype(target) if target in _LOW_PRECISION and summed.dtype != target else summed


def _wire_dtype(x: jax.Array, like, reduce_dtype) -> jnp.dtype:
    """The dtype a partial sum crosses the network in: float32 for float16/bfloat16 sums (as
    ``jnp.sum`` accumulates), or ``@mesh(reduce_dtype=...)``'s for those (half the bytes)."""
    target = x.dtype
    if like is not None and x.dtype == jnp.float32:
        target = _promoted(like)
    if target not in _LOW_PRECISION:
        return x.dtype
    return jnp.dtype(reduce_dtype) if reduce_dtype is not None else jnp.dtype(jnp.float32)


def psum(x: jax.Array, axis_name: AxisName, like=None, reduce_dtype=None) -> jax.Array:
    """``jax.lax.psum``; float16/bfloat16 partial sums are added in float32 and cast back, as
    ``jnp.sum`` does on one device (so a sum that fits is not lost to an overflow on the way).

    ``like``: the operands (or dtypes) the single-device op had; a partial sum formed in float32
    for low-precision operands (:func:`sum_dtype`) is cast back to their dtype.
    ``reduce_dtype``: ``@mesh(reduce_dtype="bfloat16")``: such sums are all-reduced in it instead.
    """
    if x.dtype == jnp.bool_:  # a mask read on the device holding it (False elsewhere), a bool matmul's: their or
        return jax.lax.psum(x.astype(jnp.int32), axis_name) != 0
    wire = _wire_dtype(x, like, reduce_dtype)
    if x.dtype in _LOW_PRECISION:
        return jax.lax.psum(x.astype(wire), axis_name).astype(x.dtype)
    if wire != x.dtype:
        return _cast_back(jax.lax.psum(x.astype(wire), axis_name), like)
    return _cast_back(jax.lax.psum(x, axis_name), like)


def psum_scatter(x: jax.Array, axis_name: AxisName, scatter_dimension: int, like=None,
                 reduce_dtype=None) -> jax.Array:
    """``jax.lax.psum_scatter(..., tiled=True)``, accumulating low-precision floats like :func:`psum`.  A dim
    that does not cut into equal blocks is a :class:`~meshify.errors.CallError` (a size meshify could not read
    when rewriting, known now)."""
    axes = (axis_name,) if isinstance(axis_name, str) else tuple(axis_name)
    shards = 1
    for a in axes:
        shards *= jax.lax.axis_size(a)
    rows = x.shape[scatter_dimension]
    if rows % shards:
        from meshify.errors import CallError

        over = " x ".join(map(repr, axes))
        raise CallError(f"a partial sum is summed and split along its dim {scatter_dimension % x.ndim} over {over}, "
                        f"but that dim has {rows} entries, which do not split into {shards} equal blocks",
                        fix=f"give that dim a multiple of {shards} entries, or map the dims it is joined with (a "
                        "concatenate's other arrays) to no mesh axis")
    if x.dtype == jnp.bool_:  # (as psum's: their or)
        return jax.lax.psum_scatter(x.astype(jnp.int32), axis_name, scatter_dimension=scatter_dimension,
                                    tiled=True) != 0
    wire = _wire_dtype(x, like, reduce_dtype)
    summed = jax.lax.psum_scatter(x.astype(wire), axis_name, scatter_dimension=scatter_dimension, tiled=True)
    if x.dtype in _LOW_PRECISION:
        return summed.astype(x.dtype)
    return _cast_back(summed, like)


def all_gather(x: jax.Array, axis_name: AxisName, axis: int, varying: bool = False) -> jax.Array:
    """Gathers the blocks of ``x`` along ``axis`` from every device on ``axis_name``.

    The result is the same on every device of ``axis_name`` and JAX's type system knows
    it (varying -> invariant, as ``jax.lax.psum``), so it can be returned as replicated
    under ``check_vma=True``; its derivative is a local slice.  One HLO all-gather.

    ``varying=True``: the gathered value is used beside values split over ``axis_name`` (a
    weight gathered for activations split on the batch, FSDP), so the result varies over it
    anyway; then ``jax.lax.all_gather``, whose transpose reduce-scatters the gradient back to
    the blocks (an all-reduce and a slice would move twice the bytes).
    """
    if varying:
        return jax.lax.all_gather(x, axis_name, axis=axis, tiled=True)
    return _all_gather_invariant(x, axis_name, axis=axis, tiled=True)


def regather_policy(primitive, *_args, **_params) -> bool:
    """The ``jax.checkpoint`` policy of :func:`regathering`: every residual is saved except what a
    varying ``all_gather`` returns, so the backward pass gathers each weight again from its saved
    block instead of keeping the whole gathered weight alive from the forward pass to the backward
    (ZeRO-3's trade of bytes for memory).
    Invariant gathers (``all_gather_invariant``: activations gathered to be whole) stay saved.
    (A name policy would not do: ``checkpoint_name``'s result is a second value, and the unnamed
    all_gather result under it stays saveable.)"""
    return primitive.name != "all_gather"


def regathering(body: Callable) -> Callable:
    """A loop body (``jax.lax.scan``'s, ``fori_loop``'s) that gathers weights as FSDP's, under
    ``jax.checkpoint`` with :func:`regather_policy`: the backward pass gathers each iteration's weights
    again from their saved blocks.  Without it JAX stacks every iteration's residuals, the gathered
    weights of all layers among them, for the backward pass (a checkpoint around the whole program
    would not help: JAX recomputes a loop's residuals by running the loop, stacking them again)."""
    return jax.checkpoint(body, policy=regather_policy)


def _all_gather_via_psum(x, axis_name, *, axis, tiled=True):
    """Fallback for JAX versions without all_gather_invariant: place the block, psum (more bytes)."""
    n = jax.lax.axis_size(axis_name)
    shape = list(x.shape)
    shape[axis] *= n
    start = jax.lax.axis_index(axis_name) * x.shape[axis]
    placed = jax.lax.dynamic_update_slice_in_dim(jnp.zeros(shape, x.dtype), x, start, axis)
    return jax.lax.psum(placed, axis_name)


try:  # public in spirit (documented in jax.lax's collectives), private in location
    from jax._src.lax.parallel import all_gather_invariant as _all_gather_invariant
except ImportError:  # pragma: no cover - depends on the JAX version
    _all_gather_invariant = _all_gather_via_psum


def global_shape(x: jax.Array, factors: Sequence[int]) -> tuple[int, ...]:
    """``x.shape`` in global terms: each local size times the shards of its dim."""
    return tuple(s * f for s, f in zip(x.shape, factors))


def pmax(x: jax.Array, axis_name: AxisName) -> jax.Array:
    """``jax.lax.pmax`` with a derivative (the lax primitive has none)."""
    return _pmax(x, axis_name)


def pmin(x: jax.Array, axis_name: AxisName) -> jax.Array:
    """``jax.lax.pmin`` with a derivative (the lax primitive has none)."""
    return _pmin(x, axis_name)


_pmax = jax.custom_jvp(lambda x, axis_name: jax.lax.pmax(x, axis_name), nondiff_argnums=(1,))
_pmin = jax.custom_jvp(lambda x, axis_name: jax.lax.pmin(x, axis_name), nondiff_argnums=(1,))


def _make_chooser_jvp(chooser):
    def jvp(axis_name, primals, tangents):
        (x,), (t,) = primals, tangents
        out = chooser()(x, axis_name)  # (itself: differentiable again, for a second derivative)
        hit = (x == out).astype(t.dtype)
        # Ties share the tangent equally, as jnp.max's own derivative does.
        return out, jax.lax.psum(t * hit, axis_name) / jax.lax.psum(hit, axis_name)
    return jvp


_pmax.defjvp(_make_chooser_jvp(lambda: _pmax))
_pmin.defjvp(_make_chooser_jvp(lambda: _pmin))

Axis = int | tuple[int, ...]


def max(x: jax.Array, axis: Axis, axis_name: AxisName, keepdims: bool = False, where=None,  # noqa: A001
        initial=None) -> jax.Array:
    """``jnp.max(x, axis, where=where, initial=initial)`` where some reduced dims are split over
    ``axis_name``: local max, ``pmax``.

    Its derivative shares ties equally among all tied elements on all devices, as
    ``jnp.max``'s does (a ``pmax`` of local maxima would share them per device first).  As JAX does,
    a mask puts the reduction's identity where it is False, and ``initial`` is met last (``lax.max``).
    """
    return _extreme(x, axis, axis_name, keepdims, where, initial, "max")


def min(x: jax.Array, axis: Axis, axis_name: AxisName, keepdims: bool = False, where=None,  # noqa: A001
        initial=None) -> jax.Array:
    """``jnp.min(x, axis, where=where, initial=initial)`` where some reduced dims are split over
    ``axis_name``: local min, ``pmin``."""
    return _extreme(x, axis, axis_name, keepdims, where, initial, "min")


def _extreme(x, axis, axis_name, keepdims, where, initial, kind):
    if where is not None:
        x = jnp.where(where, x, _identity(x.dtype, kind))
    out = _reduce(x, axis, axis_name, keepdims, kind)
    if initial is None:
        return out
    if jnp.ndim(initial) != 0:  # as jnp.max refuses it (a non-scalar would broadcast here)
        from meshify.errors import CallError

        raise CallError(f"jnp.{kind}(initial=...) of shape {jnp.shape(initial)}: the initial value must be a scalar",
                        fix="pass a scalar as initial=")
    return (jnp.maximum if kind == "max" else jnp.minimum)(out, jnp.asarray(initial, out.dtype))


def _identity(dtype, kind: str):
    """The identity of a max (min): -inf (inf) for inexact types, else the type's lowest (highest)."""
    if jnp.issubdtype(dtype, jnp.inexact):
        return jnp.asarray(-jnp.inf if kind == "max" else jnp.inf, dtype)
    if dtype == jnp.bool_:
        return jnp.asarray(kind != "max")
    info = jnp.iinfo(dtype)
    return jnp.asarray(info.min if kind == "max" else info.max, dtype)


def varying(x: jax.Array, axis_name: AxisName) -> jax.Array:
    """``x`` typed as varying over every axis of ``axis_name``: a per-device value that happens to be the same
    on the devices of some of them (a count of a mask without the batch dim beside a split batch), to be
    summed over all of them (a psum of it counts each device's, as on one device the blocks add up)."""
    names = (axis_name,) if isinstance(axis_name, str) else tuple(axis_name)
    typed = jax.typeof(x)
    have = getattr(getattr(typed, "manual_axis_type", None), "varying", None)
    if have is None:
        have = getattr(typed, "vma", frozenset())
    missing = tuple(n for n in names if n not in have)
    return jax.lax.pcast(x, missing, to="varying") if missing else x


def on_one_device(c, axis_name: AxisName):
    """``c`` on the first device along ``axis_name`` and 0 on the others: ``jnp.sum(x, initial=c)`` over split
    dims is a partial sum whose initial value must be counted once."""
    names = (axis_name,) if isinstance(axis_name, str) else tuple(axis_name)
    first = functools.reduce(jnp.logical_and, [jax.lax.axis_index(n) == 0 for n in names], jnp.bool_(True))
    return jnp.where(first, c, jnp.zeros_like(c))


def promoted(x: jax.Array, like) -> jax.Array:
    """``x`` in the dtype it and values like these promote to (``like``: a value or a tuple of them, as
    ``psum``'s).  Partial sums over one axis added ahead of a sum's other terms (``a + (b - c)`` for
    ``a + b - c``, completed by one psum) are added in the dtype the sum had where they stood: a float16 term
    after a float32 one is added in float32, as on one device."""
    target = jnp.result_type(x, _promoted(like))
    return x if x.dtype == target else x.astype(target)


def mean(x: jax.Array, axis: Axis, axis_name: AxisName, where, keepdims: bool = False, dtype=None) -> jax.Array:
    """``jnp.mean(x, axis, where=where)`` where some reduced dims are split over ``axis_name``: the masked
    sum and the count of elements each device holds, both summed over the devices, then divided, in
    the dtypes ``jnp.mean`` computes and returns in (float16 summed in float32)."""
    result = jnp.dtype(dtype) if dtype is not None else (
        x.dtype if jnp.issubdtype(x.dtype, jnp.inexact) else jnp.zeros((), float).dtype)
    computation = jnp.dtype(jnp.float32) if result in (jnp.float16, jnp.bfloat16) else result
    total = jnp.sum(x, axis, dtype=computation, keepdims=keepdims, where=where)
    count = jnp.sum(jnp.broadcast_to(where, x.shape), axis, dtype=computation, keepdims=keepdims)
    # (a mask without a split dim of x, mask[None] beside a split batch, counts the same on those devices)
    total, count = jax.lax.psum((varying(total, axis_name), varying(count, axis_name)), axis_name)
    return jax.lax.div(total, count).astype(result)


_LOCAL = {"max": jnp.max, "min": jnp.min}
_ACROSS = {"max": jax.lax.pmax, "min": jax.lax.pmin}


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3, 4))
def _reduce(x, axis, axis_name, keepdims, kind):
    return _whole(x, axis, axis_name, keepdims, kind)


def _whole(x, axis, axis_name, keepdims, kind):
    local = _LOCAL[kind](x, axis=axis, keepdims=keepdims)
    whole = _ACROSS[kind](local, axis_name)
    if not jnp.issubdtype(local.dtype, jnp.inexact):
        return whole
    # jnp.max is NaN if any element is; an all-reduce max/min drops NaNs: carry them apart.
    nan = jax.lax.pmax(jnp.isnan(local).astype(local.dtype), axis_name)
    return jnp.where(nan > 0, jnp.asarray(jnp.nan, local.dtype), whole)


@_reduce.defjvp
def _reduce_jvp(axis, axis_name, keepdims, kind, primals, tangents):
    # reduce_max's JVP, across devices: the tangents at the positions equal to the result, over
    # their count.  A NaN result (NaN kept as in the primal) equals no position: 0 / 0, NaN, as
    # jnp.max's (under jit XLA folds its transpose, ct / 0 * 0, to 0, for both alike).
    (x,), (t,) = primals, tangents
    whole = _reduce(x, axis, axis_name, True, kind)  # (itself: differentiable again, for a second derivative)
    hit = (x == whole).astype(t.dtype)
    count = jax.lax.psum(jnp.sum(hit, axis=axis, keepdims=keepdims), axis_name)
    total = jax.lax.psum(jnp.sum(t * hit, axis=axis, keepdims=keepdims), axis_name)
    out = whole if keepdims else jnp.squeeze(whole, axis)
    return out, total / count


def _global_max(x: jax.Array, axis: Axis, axis_name: AxisName, where=None) -> jax.Array:
    """The max over a split ``axis`` (``axis`` reduced; masked as ``jnp.max(where=..., initial=-inf)``);
    a constant for autodiff (stability only)."""
    local = jnp.max(x, axis=axis) if where is None else jnp.max(x, axis=axis, where=where, initial=-jnp.inf)
    return jax.lax.pmax(jax.lax.stop_gradient(local), axis_name)


def logsumexp(x: jax.Array, axis: Axis, axis_name: AxisName, keepdims: bool = False, where=None,
              b=None, return_sign: bool = False):
    """``jax.nn.logsumexp(x, axis, b=b, where=where, return_sign=...)`` over a dim split over ``axis_name``:
    local max, pmax, local sum of exp, psum; as JAX computes it (an infinite max shifts by 0; weights ``b``:
    entries of weight 0 left out, a negative sum NaN, or with ``return_sign`` the log of its magnitude and
    its sign)."""
    if where is not None:
        x = jnp.where(where, x, 0)
    if b is not None:
        dtype = jnp.result_type(x, b)
        dtype = dtype if jnp.issubdtype(dtype, jnp.inexact) else jnp.zeros((), float).dtype
        x, b = x.astype(dtype), jnp.asarray(b).astype(dtype)
        x = jnp.where(b != 0, x, -jnp.inf)
    m = _global_max(x, axis, axis_name, where)
    m = jnp.where(jnp.isfinite(m), m, jnp.zeros_like(m))
    e = jnp.exp(x - jnp.expand_dims(m, axis))
    if b is not None:
        e = e * b
    total = jax.lax.psum(jnp.sum(e, axis=axis, where=where), axis_name)
    out = jnp.log(jnp.abs(total)) + m
    if return_sign:
        sign = jnp.sign(total)
        return (jnp.expand_dims(out, axis), jnp.expand_dims(sign, axis)) if keepdims else (out, sign)
    if b is not None:
        out = jnp.where(jnp.sign(total) < 0, jnp.asarray(jnp.nan, out.dtype), out)
    return jnp.expand_dims(out, axis) if keepdims else out


def softmax(x: jax.Array, axis: Axis, axis_name: AxisName, where=None) -> jax.Array:
    """``jax.nn.softmax(x, axis, where=where)`` over a dim split over ``axis_name`` (with a mask, JAX's own
    derivative, which keeps masked entries out of it)."""
    if where is not None:
        return _masked_softmax(x, where, axis, axis_name)
    e = jnp.exp(x - jnp.expand_dims(_global_max(x, axis, axis_name), axis))
    return e / jnp.expand_dims(jax.lax.psum(jnp.sum(e, axis=axis), axis_name), axis)


@functools.partial(jax.custom_jvp, nondiff_argnums=(2, 3))
def _masked_softmax(x, where, axis, axis_name):
    e = jnp.exp(jnp.where(where, x, -jnp.inf) - jnp.expand_dims(_global_max(x, axis, axis_name, where), axis))
    y = e / jnp.expand_dims(jax.lax.psum(jnp.sum(e, axis=axis, where=where), axis_name), axis)
    return jnp.where(where, y, 0)


@_masked_softmax.defjvp
def _masked_softmax_jvp(axis, axis_name, primals, tangents):
    (x, where), (t, _) = primals, tangents
    y = _masked_softmax(x, where, axis, axis_name)
    return y, y * (t - jnp.expand_dims(jax.lax.psum(jnp.sum(y * t, axis=axis, where=where), axis_name), axis))


def log_softmax(x: jax.Array, axis: Axis, axis_name: AxisName, where=None) -> jax.Array:
    """``jax.nn.log_softmax(x, axis, where=where)`` over a dim split over ``axis_name``, as JAX computes it."""
    shifted = (x if where is None else jnp.where(where, x, -jnp.inf)) - jnp.expand_dims(
        _global_max(x, axis, axis_name, where), axis)
    total = jax.lax.psum(jnp.sum(jnp.exp(shifted), axis=axis, where=where), axis_name)
    result = shifted - jnp.log(jnp.expand_dims(total, axis))
    return result if where is None else jnp.where(where, result, -jnp.inf)


def _block_offset(axis_name: AxisName, local_size: int) -> jax.Array:
    return jax.lax.axis_index(axis_name) * local_size


def _widened(ids) -> jax.Array:
    """``ids`` in a dtype that holds a dim's size and a block's offset: int32 for narrower integers (an int8 id
    compared with a size of 256, or less a block offset of 128, would wrap)."""
    ids = jnp.asarray(ids)
    return ids.astype(jnp.int32) if jnp.issubdtype(ids.dtype, jnp.integer) and ids.dtype.itemsize < 4 else ids


def _lookup_ids(ids: jax.Array, size: int, mode: str, take: bool = False) -> tuple[jax.Array, jax.Array | None]:
    """Global ids as jnp would read them for a dim of ``size`` (widened: see :func:`_widened`), and which are
    in range (None: all).

    ``index``: ``x[ids]`` (negatives from -size wrap; out of range: clamped, without gradient);
    ``fill``: ``jnp.take``'s default (negatives from -size wrap, the rest out of range);
    ``clip``: clamped, negatives too; ``clip_wrapped``: ``take_along_axis``'s clip (negatives wrap
    first); ``wrap``: modulo ``size``.  ``take``: ``jnp.take``'s fill, which adds the size to negative
    ids in their own dtype (an int8 id gets 256 added as 0, and stays out of range), as here; elsewhere
    JAX widens the ids first (``take_along_axis``) or refuses a size their dtype cannot hold (``x[ids]``).
    """
    if take and mode == "fill":
        ids = jnp.asarray(ids)  # jnp.take's own sum, in the ids' dtype (the size is a traced int32 here)
        ids = _widened(jnp.where(ids < 0, ids + jax.lax.convert_element_type(size, ids.dtype), ids))
        return ids, (ids >= 0) & (ids < size)
    ids = _widened(ids)
    if mode == "clip":
        return jnp.clip(ids, 0, size - 1), None
    if mode == "wrap":
        return jnp.mod(ids, size), None
    ids = jnp.where(ids < 0, ids + size, ids)
    if mode == "clip_wrapped":  # take_along_axis's clip: negative ids wrap first
        return jnp.clip(ids, 0, size - 1), None
    return ids, (ids >= 0) & (ids < size)


def _fill(dtype, fill_value):
    """``jnp.take``'s fill for out-of-range ids: NaN for inexact types, the lowest (signed), highest
    (unsigned) or True (bool) value otherwise, unless given."""
    if fill_value is not None:
        return jnp.asarray(fill_value, dtype)
    if jnp.issubdtype(dtype, jnp.inexact):
        return jnp.asarray(jnp.nan, dtype)
    if jnp.issubdtype(dtype, jnp.bool_):
        return jnp.asarray(True, dtype)
    info = jnp.iinfo(dtype)
    return jnp.asarray(info.min if jnp.issubdtype(dtype, jnp.signedinteger) else info.max, dtype)


def _masked(found: jax.Array, mine: jax.Array, valid: jax.Array | None, axis_name: AxisName,
            fill_value) -> jax.Array:
    """This device's share of a lookup's partial sum: its own rows, zeros elsewhere, and (on the first
    device of ``axis_name`` only) the fill value where an id is out of range."""
    out = jnp.where(mine, found, jnp.zeros((), found.dtype))
    if valid is None:
        return out
    if fill_value is _CLAMP:  # x[ids]: out of range reads the clamped row, and its gradient goes nowhere
        return jnp.where(valid, out, jax.lax.stop_gradient(out))
    first = jax.lax.axis_index(axis_name) == 0
    return jnp.where(valid | ~first, out, _fill(found.dtype, fill_value))


_CLAMP = object()


def take(table: jax.Array, ids: jax.Array, axis: int, axis_name: AxisName, mode: str = "fill",
         fill_value=None) -> jax.Array:
    """``jnp.take(table, ids, axis, mode=mode)`` (``mode="index"``: ``table[ids]``) where ``table``'s
    ``axis`` is split over ``axis_name``.

    Each device looks up the ids that fall in its block and writes zeros elsewhere; the
    result is a partial sum over ``axis_name`` (the caller psums it, as late as it can).
    Out-of-range ids follow ``mode`` exactly as on one device.
    """
    local = table.shape[axis]
    size = local * jax.lax.axis_size(axis_name)
    ids, valid = _lookup_ids(ids, size, "fill" if mode == "index" else mode, take=mode != "index")
    if mode == "index":  # as JAX indexes: clamped, and the backward scatter drops out-of-range ids
        ids, fill_value = jnp.clip(ids, 0, size - 1), _CLAMP
    shifted = ids - _block_offset(axis_name, local)
    mine = (shifted >= 0) & (shifted < local)
    found = jnp.take(table, jnp.where(mine, shifted, 0), axis=axis)
    expand = tuple(range(axis + ids.ndim, found.ndim)) + tuple(range(axis))
    valid = None if valid is None else jnp.expand_dims(valid, expand)
    return _masked(found, jnp.expand_dims(mine, expand), valid, axis_name, fill_value)


def take_along_axis(arr: jax.Array, ids: jax.Array, axis: int, axis_name: AxisName, mode: str = "fill",
                    fill_value=None) -> jax.Array:
    """``jnp.take_along_axis`` over a dim split over ``axis_name``: masked, a partial sum.  ``mode="index"``:
    as ``x[rows, ids]`` indexes (negative ids wrap, the rest out of range read the clamped entry and
    get no gradient: JAX's gather clamps, its transpose drops them); with no ``axis_name``, locally."""
    local = arr.shape[axis]
    size = local * (jax.lax.axis_size(axis_name) if axis_name else 1)
    ids, valid = _lookup_ids(ids, size, "fill" if mode == "index" else mode)
    if mode == "index":
        ids, fill_value = jnp.clip(ids, 0, size - 1), _CLAMP
    if not axis_name:
        found = jnp.take_along_axis(arr, ids, axis=axis)
        return found if valid is None else jnp.where(valid, found, jax.lax.stop_gradient(found))
    shifted = ids - _block_offset(axis_name, local)
    mine = (shifted >= 0) & (shifted < local)
    found = jnp.take_along_axis(arr, jnp.where(mine, shifted, 0), axis=axis)
    return _masked(found, mine, valid, axis_name, fill_value)


def multi_index(x: jax.Array, dims: Sequence[int], ids: Sequence[jax.Array], axis_names: Sequence[Any]) -> jax.Array:
    """``x[..., i, j]`` with index arrays at ``dims`` (``:`` elsewhere), some of those dims split over
    ``axis_names`` (``()``: whole): each index read as JAX indexing reads it (negatives wrap; out of range: the
    clamped entry, without gradient), each device reading the entries its block holds and zeros elsewhere: a
    partial sum over the axes of the split dims, which the caller completes."""
    index: list[Any] = [slice(None)] * x.ndim
    mine = valid = None
    for d, i, axes in zip(dims, ids, axis_names):
        local = x.shape[d]
        axes = () if axes is None else (axes,) if isinstance(axes, str) else tuple(axes)
        size = local * math.prod(jax.lax.axis_size(a) for a in axes)
        g, ok = _lookup_ids(i, size, "fill")
        g = jnp.clip(g, 0, size - 1)
        valid = ok if valid is None else valid & ok
        if axes:
            shifted = g - _block_offset(axes, local)
            here = (shifted >= 0) & (shifted < local)
            g = jnp.where(here, shifted, 0)
            mine = here if mine is None else mine & here
        index[d] = g
    out = x[tuple(index)]
    shape = jnp.broadcast_shapes(*(i.shape for i in ids))
    together = list(dims) == list(range(dims[0], dims[0] + len(dims)))
    at = dims[0] if together else 0

    def placed(mask):
        return jnp.broadcast_to(mask, shape).reshape((1,) * at + shape + (1,) * (out.ndim - at - len(shape)))

    if mine is not None:
        out = jnp.where(placed(mine), out, jnp.zeros((), out.dtype))
    return out if valid is None else jnp.where(placed(valid), out, jax.lax.stop_gradient(out))


def rows_at(x: jax.Array, ids: jax.Array, values, how: str, rows: int | None = None,
            axis_name: AxisName | None = None) -> jax.Array:
    """``x.at[jnp.arange(B), ids].how(values)`` on this device's rows (``ids`` of the rows' dims; for two
    leading dims the ``[:, None]``/``[None, :]`` grids; ``rows`` leading dims of ``ids`` where it has more,
    ``x.at[jnp.arange(B)[:, None], ids]``: several positions per row): the row index built from the block's
    own shape, so each device writes its rows, dropping or wrapping positions as JAX's scatter does on one
    device.  ``axis_name``: the positions' dim is split over it; each device writes the positions in its
    block (negatives wrapped by the whole size first) and drops the others."""
    k = ids.ndim if rows is None else rows
    if axis_name is not None:
        shifted, mine = _in_block(ids, x.shape[k], axis_name)
        ids = jnp.where(mine, shifted, x.shape[k])  # (past the block: out of range, dropped)
    grids = tuple(jnp.arange(x.shape[j]).reshape(tuple(-1 if i == j else 1 for i in range(ids.ndim)))
                  for j in range(k))
    return getattr(x.at[(*grids, ids)], how)(values)


def scatter(x: jax.Array, ids: jax.Array, values, axis: int, axis_name: AxisName, how: str,
            unique_indices: bool = False) -> jax.Array:
    """``x.at[(:,) * axis, ids].how(values)`` where ``x``'s ``axis`` is split over ``axis_name``: each device
    puts the ids in its block (every device holds every id and value), the others sent out of range, each
    to a place of its own (ids the user promised unique stay unique), and dropped.  Negative ids wrap by
    the global size first, and ids still out of range are dropped, as JAX's scatter does on one device."""
    local = x.shape[axis]
    shifted, mine = _in_block(ids, local, axis_name)
    away = local + jnp.arange(ids.size, dtype=shifted.dtype).reshape(ids.shape)
    index = (slice(None),) * axis + (jnp.where(mine, shifted, away),)
    return getattr(x.at[index], how)(values, mode="drop", unique_indices=unique_indices)


def _in_block(ids: jax.Array, local: int, axis_name: AxisName) -> tuple[jax.Array, jax.Array]:
    """Global ids along a dim split over ``axis_name`` in blocks of ``local``: each as an index into this
    device's block, and whether it falls in it (negative ids wrap by the whole size first, as on one device)."""
    size = local * jax.lax.axis_size(axis_name)
    ids = _widened(ids)
    shifted = jnp.where(ids < 0, ids + size, ids) - _block_offset(axis_name, local)
    return shifted, (shifted >= 0) & (shifted < local)


def one_hot(x: jax.Array, num_classes: int, axis_name: AxisName, dtype=jnp.float32, axis: int = -1) -> jax.Array:
    """This device's block of ``jax.nn.one_hot(x, num_classes, axis=axis)`` along a depth split over
    ``axis_name``."""
    local = num_classes // jax.lax.axis_size(axis_name)
    # as jax.nn.one_hot compares: each class (this block's, global) in x's dtype (an int8 x: class 255 is -1)
    classes = jnp.arange(local, dtype=jnp.int32) + _block_offset(axis_name, local)
    x = jnp.asarray(x)
    out = (x[..., None] == classes.astype(x.dtype)).astype(dtype)
    return out if axis in (-1, x.ndim) else jnp.moveaxis(out, -1, axis)


def debug_print(fmt: str, *args, ordered: bool = False, **kwargs) -> None:
    """``jax.debug.print(fmt, *args, **kwargs)`` of whole values, printed by the first device of the mesh alone
    (as one device prints them once); outside ``shard_map`` as JAX prints."""
    mesh = jax.sharding.get_abstract_mesh()
    names = tuple(getattr(mesh, "manual_axes", ()) or ()) if mesh is not None else ()
    if not names:
        return jax.debug.print(fmt, *args, ordered=ordered, **kwargs)
    first = functools.reduce(jnp.logical_and, [jax.lax.axis_index(n) == 0 for n in names], jnp.bool_(True))

    def show() -> None:
        jax.debug.print(fmt, *args, ordered=ordered, **kwargs)

    jax.lax.cond(first, show, lambda: None)
    return None


def refused(code: str, headline: str, fix: str = "", at: str = "") -> Exception:
    """The error of a branch meshify refused to rewrite (``raise mr.refused(...)`` in its place), raised when a
    call takes it: ``code``, ``headline`` and ``fix`` are the rewrite's error, ``at`` its ``path:line:col``."""
    import linecache

    from meshify import errors

    cls = next((c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, errors.MeshifyError)
                and c.code == code), errors.MeshifyError)
    span = None
    path, _, place = at.rpartition(":")
    path, _, line = path.rpartition(":")
    if path and line.isdigit() and place.isdigit():
        span = errors.SourceSpan(path, int(line), int(place), linecache.getline(path, int(line)))
    return cls(f"{headline} (in a branch meshify refused to rewrite, which this call takes)", span=span, fix=fix,
               code=code)


from meshify.runtime._random import bernoulli, categorical, local_draw  # noqa: E402,F401 (random draws: each device its own block)
from meshify.runtime._statistics import all, any, argmax, argmin, associative_scan, average, cumprod, cumsum, cumulative, matrix_norm, nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmean, nanmin, nanstd, nansum, nanvar, norm, prod, ptp, segment_max, segment_min, standardize, std, top_k, var  # noqa: E402,F401,A004 (reductions over split dims)


def elementwise(fn: Callable) -> Callable:
    """``fn`` where the program calls a function held in a static value (``cfg.act(h)``) on a split block:
    the rewrite took it for an elementwise function of one array, so it must be one meshify has a rule
    for (``jax.nn.gelu``, ``jnp.tanh``, ..., or a ``functools.partial`` of one binding keywords only);
    anything else raises here, when JAX traces the call."""
    import functools
    import importlib

    from meshify._unary import UNARY
    from meshify.errors import CallError

    target = fn.func if isinstance(fn, functools.partial) and not fn.args else fn
    for name in UNARY:
        module, _, attr = name.rpartition(".")
        try:
            if getattr(importlib.import_module(module), attr, None) is target:
                return fn
        except ImportError:  # pragma: no cover - a JAX without that module
            continue
    raise CallError(f"{fn!r} is called on a split or partial block, where meshify took it for an elementwise "
                    "function of one array (it is held in a static value, so the rewrite could not see which)",
                    fix="pass a jax.nn / jax.numpy elementwise function (or a functools.partial of one with "
                        "keywords), or call a module-level def by its name so that meshify rewrites it")


def method_receiver(receiver: object, owner: type, name: str) -> object:
    """``receiver`` where the program calls ``self.<name>(...)``, rewritten as ``owner``'s own method: its
    ``name`` must be that def (a subclass overriding it, or an attribute of the instance under that name,
    runs other code, which the rewrite did not see); raises otherwise, when JAX traces the call."""
    from meshify.errors import CallError

    own = owner.__dict__.get(name)
    own = own.__func__ if isinstance(own, staticmethod) else own
    found = getattr(type(receiver), name, None)
    if found is not own or name in getattr(receiver, "__dict__", {}):
        kind = type(receiver).__name__
        where = "an attribute of the instance" if found is own else f"{kind}.{name}"
        raise CallError(f"self.{name}(...) was rewritten as {owner.__name__}.{name}, but on this {kind} it is "
                        f"{where}, other code the rewrite did not see",
                        fix=f"put @mesh on the method of {kind} that calls it (so that meshify reads {kind}'s "
                            f"{name}), or do not override {name}")
    return receiver


def method(receiver: object, owner: type, name: str, version: Callable) -> Callable:
    """``version`` (a method's rewritten version) standing for ``receiver.<name>``: with the receiver bound,
    or as it is for a staticmethod; checked as :func:`method_receiver` checks (``jax.checkpoint(self.block)``,
    ``self.snorm(x)``)."""
    import functools

    method_receiver(receiver, owner, name)
    return version if isinstance(owner.__dict__.get(name), staticmethod) else functools.partial(version, receiver)


def global_norm(tree: Any, axes_of: dict[str, tuple[str, ...]]) -> jax.Array:
    """``optax.global_norm(tree)`` of leaves split over mesh axes (``axes_of``: each leaf's path as meshify names
    it, ``.w``, ``["k"]``-free ``.k``, ``.blocks.*.w`` for every item of a list, ``[0]`` for a tuple's, -> the axes
    it is split over): each leaf's local sum of squares (in its dtype, as optax), summed per set of axes, each
    sum completed by one psum, then the square root of their total."""
    groups: dict[tuple[str, ...], Any] = {}
    for keys, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        axes = _leaf_axes(keys, axes_of)
        square = jnp.sum(jnp.real(jnp.conj(leaf) * leaf))
        groups[axes] = groups[axes] + square if axes in groups else square
    total = None
    for axes, part in groups.items():
        whole = jax.lax.psum(part, axes) if axes else part
        total = whole if total is None else total + whole
    return jnp.sqrt(total if total is not None else jnp.zeros(()))


def tree_map_each(fns: dict[str, Callable], tree: Any, *rest: Any, with_path: bool = False) -> Any:
    """``jax.tree.map(f, tree, *rest)`` where meshify rewrote ``f`` differently for leaves split differently
    (``fns``: each leaf's path as meshify names it, ``.ids``, ``[0]``, -> its version of ``f``): each leaf
    mapped by its own version, the structure as ``jax.tree.map`` gives it (``with_path``: as
    ``jax.tree_util.tree_map_with_path``, each version given the leaf's key path first)."""
    def apply(keys, *leaves):
        path = _leaf_paths(keys)[0]
        if path not in fns:
            from meshify.errors import CallError

            raise CallError(f"jax.tree.map: no rewritten function for the leaf at {jax.tree_util.keystr(tuple(keys))}",
                            fix="pass the pytree meshify rewrote the call for")
        return fns[path](keys, *leaves) if with_path else fns[path](*leaves)

    return jax.tree_util.tree_map_with_path(apply, tree, *rest)


def tree_leaves(tree: Any, paths: Sequence[str]) -> list:
    """``jax.tree.leaves(tree)``, checked to give the leaves meshify read at ``paths`` in that order (a pytree
    class flattened otherwise than its hint says would pair each leaf with another's layout)."""
    found = jax.tree_util.tree_flatten_with_path(tree)[0]
    got = [_leaf_paths(keys)[0] for keys, _ in found]
    if got != list(paths):
        from meshify.errors import CallError

        raise CallError(f"jax.tree.leaves gives the leaves {got}, but meshify read them as {list(paths)}",
                        fix="pass the pytree the hint names, flattening its fields in the order its class declares "
                            "them (register_dataclass(data_fields=[...]) in that order, a tree_flatten returning "
                            "them so)")
    return [leaf for _, leaf in found]


def tree_flatten(tree: Any, paths: Sequence[str]) -> tuple[list, Any]:
    """``jax.tree.flatten(tree)``: its leaves checked as :func:`tree_leaves` checks them, and its structure."""
    return tree_leaves(tree, paths), jax.tree_util.tree_structure(tree)


def _leaf_paths(keys: Sequence[Any]) -> list[str]:
    """The paths meshify may name the leaf at JAX key path ``keys`` by (``.k`` for a dict's or a field's key,
    ``[i]`` for a tuple's item, also ``.*`` for a list's items), the spelled-out index first."""
    paths = [""]
    for key in keys:
        if isinstance(key, jax.tree_util.SequenceKey):
            paths = [f"{p}[{key.idx}]" for p in paths] + [f"{p}.*" for p in paths]
        elif isinstance(key, jax.tree_util.DictKey):
            paths = [f"{p}.{key.key}" for p in paths]
        elif isinstance(key, jax.tree_util.GetAttrKey):
            paths = [f"{p}.{key.name}" for p in paths]
        else:
            paths = [f"{p}.{key}" for p in paths]
    return paths


def _leaf_axes(keys: Sequence[Any], axes_of: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The axes ``axes_of`` gives the leaf at JAX key path ``keys`` (a list's index read as its items' ``*``)."""
    paths = _leaf_paths(keys)
    found = next((p for p in paths if p in axes_of), None)
    if found is None:
        from meshify.errors import CallError

        raise CallError(f"global_norm: no layout for the leaf at {jax.tree_util.keystr(tuple(keys))}",
                        fix="pass the pytree meshify rewrote the call for")
    return tuple(axes_of[found])
