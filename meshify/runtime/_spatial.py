"""Spatial parallelism: images split over height and width, with halo exchange.

A convolution over a split spatial dim needs, on each device, a few rows of its neighbours'
blocks: the *halo*.  :func:`halo_exchange` sends exactly those rows with ``jax.lax.ppermute``
(rows, columns and, for two split dims, the corners from the diagonal neighbours); a device at
the image border receives zeros, which are the convolution's zero padding there.
:func:`halo_conv` is ``jax.lax.conv_general_dilated`` on a block split along spatial dims: it
works out each split dim's halo from the kernel size, dilation, stride and padding of the
*global* convolution, exchanges it, and convolves the extended block with no padding along the
split dims, so that each device computes exactly its block of the global output.

Everything here runs inside ``jax.shard_map``; the shapes it sees are per-device blocks.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp

from meshify.errors import CallError

__all__ = ["conv_halos", "halo_conv", "halo_exchange"]

Axes = tuple[str, ...]


def _axes(entry) -> Axes:
    if entry is None:
        return ()
    return (entry,) if isinstance(entry, str) else tuple(entry)


def _shards(axes: Axes) -> int:
    return math.prod(jax.lax.axis_size(a) for a in axes)


def _position(axes: Axes, index: dict[str, int]) -> int:
    """A device's block along a dim split over ``axes`` (major first), from its mesh coordinates."""
    pos = 0
    for a in axes:
        pos = pos * jax.lax.axis_size(a) + index[a]
    return pos


def _coords(axes: Axes, pos: int) -> dict[str, int]:
    out = {}
    for a in reversed(axes):
        size = jax.lax.axis_size(a)
        out[a] = pos % size
        pos //= size
    return out


def _neighbour_perm(dims_axes: Sequence[Axes], shift: Sequence[int], order: Axes) -> list[tuple[int, int]]:
    """``ppermute`` pairs over ``order`` (mesh order, as JAX numbers devices): the device at block
    ``p`` (one entry per split dim) sends to the device at block ``p - shift``, so that each device
    receives from ``p + shift``; devices with no such neighbour receive nothing (zeros)."""
    sizes = {a: jax.lax.axis_size(a) for a in order}
    pairs = []
    for coords in itertools.product(*(range(sizes[a]) for a in order)):
        index = dict(zip(order, coords))
        target = dict(index)
        inside = True
        for axes, s in zip(dims_axes, shift):
            pos = _position(axes, index) - s
            if not 0 <= pos < _shards(axes):
                inside = False
                break
            target.update(_coords(axes, pos))
        if inside:
            pairs.append((_linear(index, order, sizes), _linear(target, order, sizes)))
    return pairs


def _linear(index: dict[str, int], order: Axes, sizes: dict[str, int]) -> int:
    out = 0
    for a in order:
        out = out * sizes[a] + index[a]
    return out


def _mesh_order(axes: set[str]) -> Axes:
    names = jax.sharding.get_abstract_mesh().axis_names
    return tuple(a for a in names if a in axes)


def _piece(x: jax.Array, dims: Sequence[int], halos: Sequence[tuple[int, int]], direction: Sequence[int]):
    """The part of ``x`` a device sends for ``direction``: along each split dim, its last ``lo`` rows
    (for the neighbour after it, direction -1), its first ``hi`` rows (direction +1), or all."""
    index = [slice(None)] * x.ndim
    for dim, (lo, hi), d in zip(dims, halos, direction):
        if d < 0:
            index[dim] = slice(x.shape[dim] - lo, x.shape[dim])
        elif d > 0:
            index[dim] = slice(0, hi)
    return x[tuple(index)]


def halo_exchange(x: jax.Array, dims: Sequence[int], halos: Sequence[tuple[int, int]],
                  axis_names: Sequence) -> jax.Array:
    """``x`` extended along each split dim ``dims[i]`` by ``halos[i] = (lo, hi)`` rows of the neighbouring
    blocks (over mesh axes ``axis_names[i]``): ``lo`` rows before from the previous block, ``hi``
    after from the next; zeros beyond the first and last blocks (the image border).  Two or more
    split dims also take the corners from the diagonal neighbours.  One ``ppermute`` per non-empty
    side (and corner)."""
    dims_axes = [_axes(a) for a in axis_names]
    for dim, (lo, hi), axes in zip(dims, halos, dims_axes):
        local = x.shape[dim]
        if lo < 0 or hi < 0 or max(lo, hi) > local:
            raise CallError(
                f"a halo of {lo} rows before and {hi} after along dim {dim}, split over "
                f"{' x '.join(map(repr, axes))} into blocks of {local} rows: a halo must be at most one block "
                "(it comes from the direct neighbours only)",
                fix="use fewer shards along this dim, larger images, or a smaller window")
    grid = {}
    for direction in itertools.product((-1, 0, 1), repeat=len(dims)):
        widths = [(lo, 1, hi)[d + 1] for (lo, hi), d in zip(halos, direction)]
        if 0 in widths:
            continue
        piece = _piece(x, dims, halos, direction)
        moving = [i for i, d in enumerate(direction) if d]
        if moving:
            order = _mesh_order({a for i in moving for a in dims_axes[i]})
            perm = _neighbour_perm([dims_axes[i] for i in moving], [direction[i] for i in moving], order)
            piece = jax.lax.ppermute(piece, order, perm)
        grid[direction] = piece
    return _assemble(grid, list(dims), ())


def _assemble(grid: dict, dims: list[int], prefix: tuple[int, ...]) -> jax.Array:
    """Concatenates the pieces of ``grid`` (keyed by direction) along the split dims, innermost last."""
    if len(prefix) == len(dims):
        return grid[prefix]
    parts = [_assemble(grid, dims, (*prefix, d)) for d in (-1, 0, 1)
             if any(k[:len(prefix) + 1] == (*prefix, d) for k in grid)]
    return parts[0] if len(parts) == 1 else jnp.concatenate(parts, axis=dims[len(prefix)])


# -- convolution ---------------------------------------------------------------------------------------


def _specs(lhs_ndim: int, dimension_numbers):
    """``(lhs_spec, rhs_spec, out_spec)`` as JAX's ConvDimensionNumbers (dim indices, N/O, C/I, spatial)."""
    shape = (1,) * lhs_ndim
    return jax.lax.conv_dimension_numbers(shape, shape, dimension_numbers)


def conv_halos(global_in: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
               dilation: Sequence[int], padding) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The global convolution's ``(lo, hi)`` padding per spatial dim, and the halo a block needs on
    each side: ``lo`` rows before (the padding before), ``window - stride - lo`` after, where the
    dilated window is ``(kernel - 1) * dilation + 1`` (negative: the block has rows to spare)."""
    window = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    if isinstance(padding, str):
        pads = [tuple(p) for p in jax.lax.padtype_to_pads(tuple(global_in), tuple(window), tuple(strides), padding)]
    else:
        pads = [tuple(p) for p in padding]
    halos = [(lo, w - s - lo) for (lo, _), w, s in zip(pads, window, strides)]
    return pads, halos


def halo_conv(lhs: jax.Array, rhs: jax.Array, window_strides: Sequence[int], padding,
              lhs_dilation: Sequence[int] | None = None, rhs_dilation: Sequence[int] | None = None,
              dimension_numbers=None, feature_group_count: int = 1, batch_group_count: int = 1,
              precision=None, preferred_element_type=None, *, spatial_axes: Sequence) -> jax.Array:
    """``jax.lax.conv_general_dilated`` of a block split along spatial dims (``spatial_axes``: the mesh
    axes splitting each spatial dim of ``lhs``, in the order of ``dimension_numbers``, or None):
    the halos from the neighbours, then a local convolution that computes this device's block of
    the global output.  A split dim's block must cover whole strides of the output (``stride``
    divides it) and the global output must have ``rows / stride`` rows (SAME padding, or explicit
    padding totalling ``window - stride``); otherwise this raises, saying so."""
    specs = _specs(lhs.ndim, dimension_numbers)
    spatial = list(specs.lhs_spec[2:])
    kernel = [rhs.shape[d] for d in specs.rhs_spec[2:]]
    n = len(spatial)
    strides = tuple(window_strides)
    dilation = tuple(rhs_dilation) if rhs_dilation is not None else (1,) * n
    axes = [_axes(a) for a in spatial_axes]
    shards = [_shards(a) for a in axes]
    global_in = [lhs.shape[d] * s for d, s in zip(spatial, shards)]
    if lhs_dilation is not None and any(d != 1 for d, a in zip(lhs_dilation, axes) if a):
        raise CallError("lhs_dilation (a transposed convolution) along a split spatial dim",
                        fix="map that dim to no mesh axis, or upsample then convolve")
    pads, halos = conv_halos(global_in, kernel, strides, dilation, padding)
    local_pads = list(pads)
    split = [i for i in range(n) if axes[i]]
    for i in split:
        rows, stride = lhs.shape[spatial[i]], strides[i]
        (lo, hi), window = pads[i], (kernel[i] - 1) * dilation[i] + 1
        out_rows = (global_in[i] + lo + hi - window) // stride + 1 if global_in[i] + lo + hi >= window else 0
        if rows % stride or out_rows * stride != global_in[i] or lo < 0:
            raise CallError(
                f"a convolution over spatial dim {spatial[i]} split over {' x '.join(map(repr, axes[i]))} "
                f"({shards[i]} blocks of {rows} rows, {global_in[i]} in all) with stride {stride}, window {window} "
                f"and padding {pads[i]} gives {out_rows} output rows, which do not split into {shards[i]} blocks "
                f"of {rows} / {stride} rows at the shard boundaries",
                fix="use padding='SAME' (or explicit padding totalling window - stride) and blocks whose size is a "
                    "multiple of the stride, or map this dim to no mesh axis")
        local_pads[i] = (0, min(halos[i][1], 0))
    extended = halo_exchange(lhs, [spatial[i] for i in split], [(halos[i][0], max(halos[i][1], 0)) for i in split],
                             [axes[i] for i in split])
    return jax.lax.conv_general_dilated(
        extended, rhs, strides, local_pads, lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
        dimension_numbers=dimension_numbers, feature_group_count=feature_group_count,
        batch_group_count=batch_group_count, precision=precision, preferred_element_type=preferred_element_type)
