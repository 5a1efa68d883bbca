"""Random draws inside ``jax.shard_map``: each device draws only its own block, bit-identical
to the single-device draw.

With ``jax_threefry_partitionable`` (JAX's default since 0.5) the bits of element ``i`` of a
threefry draw are ``threefry2x32(key, i)`` for ``i`` its row-major position in the *global*
array, split into two 32-bit halves.  :func:`local_draw` hands the user's sampler
(``jax.random.bernoulli``, ``normal``, ...) a key of a small PRNG implementation of our own
(:func:`_block_impl`) that knows which block this device holds: asked for bits of the local
shape, it hashes the block's global positions.  JAX's own sampler code then turns those bits
into values exactly as on one device, so only the bits are reproduced here (a test checks them
against ``jax.random.bits`` for every width and each sampler against its single-device draw).

Where that does not hold (the flag is off, the key is not threefry2x32, or a sampler parameter
is an array broadcast against the shape) the draw is made whole and sliced: correct, with the
memory of the whole draw on every device.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend import random as jex_random
from jax.sharding import PartitionSpec

__all__ = ["local_draw"]

#: Sampler parameters that are not arrays broadcast against the shape.
_NOT_BROADCAST = frozenset({"key", "shape", "dtype", "mode", "out_sharding"})


def local_draw(sampler: Callable, spec: PartitionSpec, /, *args, **kwargs) -> jax.Array:
    """This device's block of ``sampler(*args, **kwargs)``, split as ``spec`` (one entry per dim
    of the draw's ``shape``): the same values as the global draw's block, computed alone."""
    bound = inspect.signature(sampler).bind(*args, **kwargs)
    shape = tuple(bound.arguments["shape"])
    axes = tuple(spec) + (None,) * (len(shape) - len(spec))
    factors = tuple(jax.lax.axis_size(a) if a else 1 for a in axes)
    _check_divisible(shape, axes, factors)
    if all(f == 1 for f in factors):
        return sampler(*args, **kwargs)
    key = bound.arguments["key"]
    if not _blockwise(key, bound.arguments):
        return _sliced(sampler(*args, **kwargs), axes, factors)
    bound.arguments["key"] = _block_key(key, axes, factors)
    bound.arguments["shape"] = tuple(s // f for s, f in zip(shape, factors))
    return sampler(*bound.args, **bound.kwargs)


def _check_divisible(shape, axes, factors) -> None:
    for dim, (size, axis, n) in enumerate(zip(shape, axes, factors)):
        if size % n:
            from meshify.errors import CallError

            raise CallError(f"cannot split dim {dim} of a random draw of shape {list(shape)} over mesh axis "
                            f"{axis!r}: its size {size} is not a multiple of the {n} devices",
                            fix="make that dim's size a multiple of the mesh axis, or map the dim to a smaller "
                                "mesh axis in the layout rules")


def _blockwise(key, arguments: dict) -> bool:
    """Whether the block can be drawn alone: partitionable threefry bits, and no parameter array
    (``p``, ``minval``, ...) broadcast against the global shape."""
    if not jax.config.jax_threefry_partitionable or str(jax.random.key_impl(key)) != "threefry2x32":
        return False
    return all(np.ndim(v) == 0 for name, v in arguments.items() if name not in _NOT_BROADCAST)


def _sliced(x: jax.Array, axes, factors) -> jax.Array:
    """The fallback: this device's block of a whole draw."""
    for dim, (axis, n) in enumerate(zip(axes, factors)):
        if n != 1:
            size = x.shape[dim] // n
            x = jax.lax.dynamic_slice_in_dim(x, jax.lax.axis_index(axis) * size, size, dim)
    return x


def _block_key(key, axes, factors) -> jax.Array:
    """A key of :func:`_block_impl`: the threefry key's two words, then this device's block index
    along each dim of the draw."""
    words = jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key
    index = [jax.lax.axis_index(a) if a else 0 for a in axes]
    blocks = jnp.stack([jnp.asarray(i, dtype=jnp.uint32) for i in index])
    data = jnp.concatenate([jnp.asarray(words, dtype=jnp.uint32).reshape(2), blocks])
    return jax.random.wrap_key_data(data, impl=_block_impl(factors))


@functools.cache
def _block_impl(factors: tuple[int, ...]):
    """A PRNG implementation whose keys are ``[k1, k2, block index per dim]`` for a draw split
    ``factors`` ways along its last ``len(factors)`` dims.  Splitting and folding act on the
    threefry key and carry the block index along (a sampler such as ``randint`` splits first)."""
    threefry = jex_random.threefry_prng_impl
    rank = len(factors)

    def carry(data, derived):  # derived: threefry keys of shape (*batch, 2)
        blocks = jnp.broadcast_to(data[2:], (*derived.shape[:-1], rank))
        return jnp.concatenate([derived, blocks], axis=-1)

    def seed(_):
        raise TypeError("meshify's block keys are made from a key (mr.local_draw), never seeded")

    return jex_random.define_prng_impl(
        key_shape=(2 + rank,), seed=seed,
        split=lambda data, shape: carry(data, threefry.split(data[:2], shape)),
        fold_in=lambda data, n: carry(data, threefry.fold_in(data[:2], n)),
        random_bits=functools.partial(_block_bits, factors=factors),
        name=f"meshify_block_threefry2x32{factors}", tag=f"fry_block{factors}")


def _block_bits(data, bit_width: int, shape: tuple[int, ...], factors: tuple[int, ...]) -> jax.Array:
    """The partitionable threefry bits of this block of the global draw.

    ``shape`` is the block's shape; its last ``len(factors)`` dims are split, any before them
    (``bernoulli(mode="high")`` asks for ``(2, *shape)``) are whole.
    """
    lead = len(shape) - len(factors)
    assert lead >= 0, (shape, factors)
    global_shape = shape[:lead] + tuple(s * f for s, f in zip(shape[lead:], factors))
    starts = [None] * lead + [data[2 + d] * jnp.uint32(s) for d, s in enumerate(shape[lead:])]
    hi, lo = _positions(starts, shape, global_shape)
    bits1, bits2 = jex_random.threefry2x32_p.bind(data[0], data[1], hi, lo)
    # As jax._src.random.threefry2x32._threefry_random_bits_partitionable finishes them.
    if bit_width == 64:
        hi64, lo64 = bits1.astype(jnp.uint64), bits2.astype(jnp.uint64)
        return jax.lax.shift_left(hi64, jnp.asarray(32, jnp.uint64)) | lo64
    if bit_width == 32:
        return bits1 ^ bits2
    return (bits1 ^ bits2).astype({8: jnp.uint8, 16: jnp.uint16}[bit_width])


def _positions(starts, shape, global_shape) -> tuple[jax.Array, jax.Array]:
    """The row-major positions in ``global_shape`` of a block of ``shape`` starting at ``starts``
    (None: 0), as 64-bit numbers in two uint32 arrays ``(hi, lo)``: what ``iota_2x32_shape`` gives
    the whole array."""
    strides = [math.prod(global_shape[d + 1:]) for d in range(len(shape))]
    if not shape:
        return jnp.zeros((), jnp.uint32), jnp.zeros((), jnp.uint32)
    wide = math.prod(global_shape) > 2 ** 32
    hi = lo = jnp.zeros(shape, jnp.uint32)
    for d, (start, stride) in enumerate(zip(starts, strides)):
        index = jax.lax.broadcasted_iota(jnp.uint32, shape, d)  # fused by XLA: no array of its own
        if start is not None:
            index = index + start
        if not wide:  # every position fits 32 bits
            lo = lo + index * jnp.uint32(stride)
            continue
        term_hi, term_lo = _mul_wide(index, stride)
        lo = lo + term_lo
        hi = hi + term_hi + (lo < term_lo).astype(jnp.uint32)  # the carry out of the low word
    return hi, lo


def _mul_wide(x: jax.Array, c: int) -> tuple[jax.Array, jax.Array]:
    """``x * c`` as 64 bits ``(hi, lo)``, for uint32 ``x`` and a constant ``c < 2**64``."""
    c_hi, c_lo = c >> 32, c & 0xFFFFFFFF
    x1, x0 = x >> 16, x & 0xFFFF
    b1, b0 = c_lo >> 16, c_lo & 0xFFFF
    low, mid1, mid2 = x0 * jnp.uint32(b0), x1 * jnp.uint32(b0), x0 * jnp.uint32(b1)
    carry = ((low >> 16) + (mid1 & 0xFFFF) + (mid2 & 0xFFFF)) >> 16
    hi = x1 * jnp.uint32(b1) + (mid1 >> 16) + (mid2 >> 16) + carry + x * jnp.uint32(c_hi)
    return hi, x * jnp.uint32(c_lo)


def categorical(key, logits: jax.Array, spec: PartitionSpec, /, axis: int = -1, mode: str | None = None) -> jax.Array:
    """``jax.random.categorical(key, logits, axis)`` of logits split as ``spec``: this device's block of the
    single-device draw.  As JAX computes it (``argmax(gumbel(key, logits.shape) + logits, axis)``): the Gumbel
    noise drawn blockwise (:func:`local_draw`, bit-identical to the global draw's block), added to the local
    logits, and the argmax taken along ``axis`` (across devices where that dim is split: the first global index
    of the max)."""
    from meshify.runtime._statistics import argmax

    ax = axis % logits.ndim
    axes = tuple(spec) + (None,) * (logits.ndim - len(spec))
    factors = tuple(jax.lax.axis_size(a) if a else 1 for a in axes)
    shape = tuple(s * f for s, f in zip(logits.shape, factors))
    scores = local_draw(jax.random.gumbel, PartitionSpec(*axes), key, shape, logits.dtype, mode=mode) + logits
    if axes[ax] is None:
        return jnp.argmax(scores, axis=ax)
    return argmax(scores, ax, axes[ax], ax)


def bernoulli(key, p: jax.Array, spec: PartitionSpec, /) -> jax.Array:
    """``jax.random.bernoulli(key, p)`` of probabilities split as ``spec``: this device's block of the
    single-device draw.  As JAX computes it (``uniform(key, p.shape, p.dtype) < p``): the uniform numbers drawn
    blockwise (:func:`local_draw`, bit-identical to the global draw's block), compared with the local ``p``."""
    if not jnp.issubdtype(p.dtype, jnp.floating):
        return jax.random.bernoulli(key, p)  # (JAX's own error for integer probabilities)
    axes = tuple(spec) + (None,) * (p.ndim - len(spec))
    shape = tuple(s * (jax.lax.axis_size(a) if a else 1) for s, a in zip(p.shape, axes))
    return local_draw(jax.random.uniform, PartitionSpec(*axes), key, shape, p.dtype) < p
