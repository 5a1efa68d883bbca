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

import functools
import itertools
import math
import operator
from collections.abc import Sequence

import jax
import jax.numpy as jnp

from meshify._halos import concat_shifts, reblock_halos, section_chunks, section_groups, section_widths
from meshify.errors import CallError

__all__ = ["conv_halos", "diagonal_block", "halo_conv", "halo_exchange", "halo_reduce_window", "spatial_concatenate",
           "spatial_diff", "spatial_entry", "spatial_flip", "spatial_pad", "spatial_resize", "spatial_roll",
           "spatial_slice", "split_sections"]

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


def _block_index(axes: Axes):
    """This device's block (traced) along a dim split over ``axes`` (major first)."""
    pos = 0
    for a in axes:
        pos = pos * jax.lax.axis_size(a) + jax.lax.axis_index(a)
    return pos


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
                  axis_names: Sequence, fill=0) -> jax.Array:
    """``x`` extended along each split dim ``dims[i]`` by ``halos[i] = (lo, hi)`` rows of the neighbouring
    blocks (over mesh axes ``axis_names[i]``): ``lo`` rows before from the previous block, ``hi``
    after from the next; zeros (or ``fill``: a pooling's init value) beyond the first and last blocks
    (the image border).  Two or more split dims also take the corners from the diagonal neighbours.
    One ``ppermute`` per non-empty side (and corner)."""
    dims_axes = [_axes(a) for a in axis_names]
    beyond = []  # (rows before, rows after) of each dim past the neighbour's whole block: the image's border
    for i, (dim, (lo, hi), axes) in enumerate(zip(dims, halos, dims_axes)):
        local = x.shape[dim]
        if lo >= 0 and hi >= 0 and max(lo, hi) > local and _shards(axes) == 2:
            # two blocks: the rows before the first (after the last) are the image's padding, so a halo wider
            # than a block is the neighbour's whole block and fill beyond it (causal padding of a dilated window)
            beyond.append((max(lo - local, 0), max(hi - local, 0)))
            halos = [*halos[:i], (min(lo, local), min(hi, local)), *halos[i + 1:]]
            continue
        beyond.append((0, 0))
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
            if not (isinstance(fill, int | float) and fill == 0):
                inside = [(0 <= _block_index(dims_axes[i]) + direction[i]) & (_block_index(dims_axes[i])
                                                                              + direction[i] < _shards(dims_axes[i]))
                          for i in moving]
                piece = jnp.where(functools.reduce(jnp.logical_and, inside), piece, jnp.asarray(fill, piece.dtype))
        grid[direction] = piece
    out = _assemble(grid, list(dims), ())
    if any(b != (0, 0) for b in beyond):
        widths = [(0, 0)] * out.ndim
        for dim, b in zip(dims, beyond):
            widths[dim] = b
        out = jnp.pad(out, widths, constant_values=jnp.asarray(fill, out.dtype))
    return out


def _assemble(grid: dict, dims: list[int], prefix: tuple[int, ...]) -> jax.Array:
    """Concatenates the pieces of ``grid`` (keyed by direction) along the split dims, innermost last."""
    if len(prefix) == len(dims):
        return grid[prefix]
    parts = [_assemble(grid, dims, (*prefix, d)) for d in (-1, 0, 1)
             if any(k[:len(prefix) + 1] == (*prefix, d) for k in grid)]
    return parts[0] if len(parts) == 1 else jnp.concatenate(parts, axis=dims[len(prefix)])


def _lines_up(rows: int, shards: int, stride: int, window: int, pad: tuple[int, int]) -> bool:
    """Whether a window over a dim split into ``shards`` blocks of ``rows`` gives each device the block of
    the global output at its own shard boundaries: the output has ``rows * shards / stride`` rows and
    each block holds whole strides (SAME padding, or explicit padding totalling ``window - stride``), so
    a fixed halo from each neighbour completes it."""
    lo, hi = pad
    total = rows * shards
    out_rows = (total + lo + hi - window) // stride + 1 if total + lo + hi >= window else 0
    return rows % stride == 0 and out_rows * stride == total and lo >= 0


def _window_rows(x: jax.Array, dim: int, axes: Axes, stride: int, window: int, pad: tuple[int, int], what: str,
                 fill=0) -> jax.Array:
    """The rows of ``x`` along ``dim`` (split over ``axes``) that this device's block of a window's global
    output reads, padding (``fill``) included, where the output does not line up with the shard
    boundaries (a VALID window shrinks the dim; a stride that does not divide a block): the output's
    rows are split into equal blocks and each device takes, from its neighbours, the rows its windows
    cover (``reblock_halos`` with overlapping spans).  A window over the result with no padding along
    ``dim`` computes exactly this device's output block."""
    shards, rows = _shards(axes), x.shape[dim]
    total = rows * shards
    lo, hi = pad
    out_rows = (total + lo + hi - window) // stride + 1 if total + lo + hi >= window else 0
    if out_rows <= 0 or out_rows % shards:
        raise CallError(
            f"{what} over dim {dim} split over {' x '.join(map(repr, axes))} ({shards} blocks of {rows} rows, "
            f"{total} in all) with stride {stride}, window {window} and padding {tuple(pad)} gives {out_rows} output "
            f"rows, which do not split into {shards} equal blocks",
            fix=f"choose sizes or padding that give a multiple of {shards} output rows (padding='SAME' keeps "
                f"rows / stride), or map this dim to no mesh axis")
    block = out_rows // shards
    return _reblock(x, dim, axes, -lo, block * stride * shards, what, (fill, fill), span=(block - 1) * stride + window)


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
        given = jax.lax.padtype_to_pads(tuple(global_in), tuple(window), tuple(strides), padding)
        pads: list[tuple[int, int]] = [(int(lo), int(hi)) for lo, hi in given]
    else:
        pads = [(int(lo), int(hi)) for lo, hi in padding]
    halos = [(lo, w - s - lo) for (lo, _), w, s in zip(pads, window, strides)]
    return pads, halos


def halo_conv(lhs: jax.Array, rhs: jax.Array, window_strides: Sequence[int], padding,
              lhs_dilation: Sequence[int] | None = None, rhs_dilation: Sequence[int] | None = None,
              dimension_numbers=None, feature_group_count: int = 1, batch_group_count: int = 1,
              precision=None, preferred_element_type=None, *, spatial_axes: Sequence) -> jax.Array:
    """``jax.lax.conv_general_dilated`` of a block split along spatial dims (``spatial_axes``: the mesh
    axes splitting each spatial dim of ``lhs``, in the order of ``dimension_numbers``, or None):
    the halos from the neighbours, then a local convolution that computes this device's block of
    the global output.  Where the output lines up with the shard boundaries (``rows / stride`` rows,
    each block whole strides: SAME padding, or explicit padding totalling ``window - stride``) a fixed
    halo and the corners; otherwise (a VALID window shrinking the dim) the output's rows are split into
    equal blocks again and each device takes the rows its windows cover (:func:`_window_rows`), which
    raises, saying so, where they do not split evenly or reach beyond the neighbouring blocks."""
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
    window = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    if all(_lines_up(lhs.shape[spatial[i]], shards[i], strides[i], window[i], pads[i]) for i in split):
        for i in split:
            local_pads[i] = (0, min(halos[i][1], 0))
        extended = halo_exchange(lhs, [spatial[i] for i in split],
                                 [(halos[i][0], max(halos[i][1], 0)) for i in split], [axes[i] for i in split])
    else:  # each split dim's output re-blocked in turn (a later dim's exchange carries the corners)
        extended = lhs
        for i in split:
            extended = _window_rows(extended, spatial[i], axes[i], strides[i], window[i], pads[i], "a convolution")
            local_pads[i] = (0, 0)
    return jax.lax.conv_general_dilated(
        extended, rhs, strides, local_pads, lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
        dimension_numbers=dimension_numbers, feature_group_count=feature_group_count,
        batch_group_count=batch_group_count, precision=precision, preferred_element_type=preferred_element_type)


# -- pooling -------------------------------------------------------------------------------------------


def halo_reduce_window(operand: jax.Array, init_value, computation, window_dimensions: Sequence[int],
                       window_strides: Sequence[int] | None = None, padding="VALID",
                       base_dilation: Sequence[int] | None = None, window_dilation: Sequence[int] | None = None,
                       *, spatial_axes: Sequence) -> jax.Array:
    """``jax.lax.reduce_window`` (max or average pooling) of a block split along some dims
    (``spatial_axes``: the mesh axes splitting each dim of ``operand``, or None): each split dim's halo
    from the neighbours, ``init_value`` beyond the image border (what the global padding holds), then a
    local reduce_window that computes this device's block of the global output.  A window and stride
    that line up with the shard boundaries exchange nothing (a 2x2 pool of stride 2)."""
    n = operand.ndim
    strides = tuple(window_strides) if window_strides is not None else (1,) * n
    dilation = tuple(window_dilation) if window_dilation is not None else (1,) * n
    axes = [_axes(a) for a in spatial_axes]
    shards = [_shards(a) for a in axes]
    split = [i for i in range(n) if axes[i]]
    if base_dilation is not None and any(base_dilation[i] != 1 for i in split):
        raise CallError("reduce_window with base_dilation along a split dim",
                        fix="map that dim to no mesh axis, or upsample (jnp.repeat) first")
    window = [(w - 1) * d + 1 for w, d in zip(window_dimensions, dilation)]
    global_in = [operand.shape[i] * s for i, s in enumerate(shards)]
    if isinstance(padding, str):
        given = jax.lax.padtype_to_pads(tuple(global_in), tuple(window), strides, padding)
        pads: list[tuple[int, int]] = [(int(lo), int(hi)) for lo, hi in given]
    else:
        pads = [(int(lo), int(hi)) for lo, hi in padding]
    local_pads = list(pads)
    for i in split:
        local_pads[i] = (0, 0)
    if not all(_lines_up(operand.shape[i], shards[i], strides[i], window[i], pads[i]) for i in split):
        extended = operand  # each split dim's output re-blocked in turn (as halo_conv)
        for i in split:
            extended = _window_rows(extended, i, axes[i], strides[i], window[i], pads[i],
                                    "a pooling window (reduce_window)", init_value)
        return jax.lax.reduce_window(extended, init_value, computation, tuple(window_dimensions), strides, local_pads,
                                     base_dilation=base_dilation, window_dilation=window_dilation)
    halos = [(pads[i][0], max(window[i] - strides[i] - pads[i][0], 0)) for i in split]
    extended = halo_exchange(operand, split, halos, [axes[i] for i in split], fill=init_value)
    for i in split:  # rows to spare (a window narrower than its stride): sliced off, not padded negatively,
        spare = window[i] - strides[i] - pads[i][0]  # which a max pool's gradient (select_and_scatter) cannot take
        if spare < 0:
            extended = jax.lax.slice_in_dim(extended, 0, extended.shape[i] + spare, axis=i)
    return jax.lax.reduce_window(extended, init_value, computation, tuple(window_dimensions), strides, local_pads,
                                 base_dilation=base_dilation, window_dilation=window_dilation)


# -- re-blocking: pad and slice --------------------------------------------------------------------------------


def _perm(axes: Axes, source_of) -> tuple[Axes, list[tuple[int, int]]]:
    """``ppermute`` axes and pairs along a dim split over ``axes``: the device at block ``p`` receives
    from block ``source_of(p)`` (None: from no one, it receives zeros)."""
    order = _mesh_order(set(axes))
    sizes = {a: jax.lax.axis_size(a) for a in order}
    pairs = []
    for coords in itertools.product(*(range(sizes[a]) for a in order)):
        index = dict(zip(order, coords))
        src = source_of(_position(axes, index))
        if src is not None:
            pairs.append((_linear(_coords(axes, src), order, sizes), _linear(index, order, sizes)))
    return order, pairs


def _exchange_dim(x: jax.Array, dim: int, lo: int, hi: int, axes: Axes, fill="zero") -> jax.Array:
    """``x`` extended along ``dim`` (split over ``axes``) by ``lo`` rows of the previous block and ``hi``
    of the next; beyond the first and last blocks zeros, (``fill="edge"``) copies of the edge row,
    (``"reflect"``, ``"symmetric"``) the border block's rows mirrored, or (``fill="wrap"``) the rows of the
    block at the other end (periodic: the ppermute is a ring)."""
    shards, local = _shards(axes), x.shape[dim]
    if max(lo, hi) + (fill == "reflect") > local:
        raise CallError(
            f"{lo} rows before and {hi} after each block along dim {dim}, split over "
            f"{' x '.join(map(repr, axes))} into blocks of {local} rows, would come from devices farther than the "
            "next one (a halo must be at most one block): a slice, pad, shift or window along a split dim "
            "(x[: len(x) // 2] of a split batch) moves rows between neighbouring devices only", fix="cut equal parts with jnp.split(x, n, axis) (its sections "
            "move in chunks: half, rest = jnp.split(x, 2, axis=0)), use fewer shards along this dim or a larger "
            "dim, or map it to no mesh axis")
    pos = _block_index(axes)
    parts = []
    if lo:
        order, pairs = _perm(axes, lambda p: p - 1 if p > 0 else (shards - 1 if fill == "wrap" else None))
        piece = jax.lax.ppermute(jax.lax.slice_in_dim(x, local - lo, local, axis=dim), order, pairs)
        if fill in _OWN_ROWS:
            piece = jnp.where(pos > 0, piece, _own_rows(x, dim, lo, fill, first=True))
        parts.append(piece)
    parts.append(x)
    if hi:
        order, pairs = _perm(axes, lambda p: p + 1 if p + 1 < shards else (0 if fill == "wrap" else None))
        piece = jax.lax.ppermute(jax.lax.slice_in_dim(x, 0, hi, axis=dim), order, pairs)
        if fill in _OWN_ROWS:
            piece = jnp.where(pos < shards - 1, piece, _own_rows(x, dim, hi, fill, first=False))
        parts.append(piece)
    return parts[0] if len(parts) == 1 else jnp.concatenate(parts, axis=dim)


#: Fills whose rows beyond the first (last) block come from that block itself.
_OWN_ROWS = ("edge", "reflect", "symmetric")


def _own_rows(x: jax.Array, dim: int, rows: int, fill: str, first: bool) -> jax.Array:
    """The ``rows`` rows ``jnp.pad(mode=fill)`` puts before the first block (``first``) or after the last, from
    that block's own rows: its edge row repeated (``edge``), or its border rows mirrored, the edge row itself
    left out (``reflect``) or repeated (``symmetric``)."""
    local = x.shape[dim]
    if fill == "edge":
        edge = jax.lax.slice_in_dim(x, 0, 1, axis=dim) if first else jax.lax.slice_in_dim(x, local - 1, local, axis=dim)
        return jnp.repeat(edge, rows, axis=dim)
    skip = 1 if fill == "reflect" else 0
    start, stop = (skip, skip + rows) if first else (local - skip - rows, local - skip)
    return jnp.flip(jax.lax.slice_in_dim(x, start, stop, axis=dim), axis=dim)


def _reblock(x: jax.Array, dim: int, axes: Axes, start: int, out_rows: int, what: str,
             values: tuple = (0, 0), span: int | None = None, image: tuple[int, int] | None = None) -> jax.Array:
    """This device's block of the dim's global rows ``[start, start + out_rows)`` split again into as
    many blocks (``span`` rows from its block's start, where given); rows before the image (its rows
    ``image``, all of them where not given) hold ``values[0]``, rows after it ``values[1]``.  A neighbour
    exchange (``reblock_halos``), a local pad and a dynamic slice at this device's offset."""
    shards, rows = _shards(axes), x.shape[dim]
    total = rows * shards
    image_start, image_end = image if image is not None else (0, total)
    if out_rows % shards or out_rows <= 0:
        raise CallError(f"{what} along dim {dim}, split over {' x '.join(map(repr, axes))} into {shards} blocks, "
                        f"gives {out_rows} rows, which do not split into {shards} equal blocks",
                        fix=f"make the result's size a multiple of {shards}, or map this dim to no mesh axis")
    block = out_rows // shards
    span = block if span is None else span
    before, after = reblock_halos(rows, shards, start, out_rows, span, (image_start, image_end))
    extended = _exchange_dim(x, dim, max(before, 0), max(after, 0), axes)
    first = -max(before, 0)  # the global row of extended[0], relative to this device's block start
    offsets = [start + i * block - i * rows - first for i in range(shards)]
    pad_lo, pad_hi = max(-min(offsets), 0), max(max(offsets) + span - extended.shape[dim], 0)
    if pad_lo or pad_hi:
        widths = [(0, 0)] * x.ndim
        widths[dim] = (pad_lo, pad_hi)
        extended = jnp.pad(extended, widths)
    pos = _block_index(axes)
    begin = start + pos * block  # global row of this device's first output row
    out = jax.lax.dynamic_slice_in_dim(extended, begin - pos * rows - first + pad_lo, span, axis=dim)
    if start < image_start or start + (shards - 1) * block + span > image_end:
        shape = [1] * x.ndim
        shape[dim] = span
        row = begin + jax.lax.broadcasted_iota(jnp.int32, tuple(shape), dim)
        lo_value, hi_value = (jnp.asarray(v, out.dtype) for v in values)
        out = jnp.where(row < image_start, lo_value, jnp.where(row >= image_end, hi_value, out))
    return out


def _pad_widths(pad_width, ndim: int) -> list[tuple[int, int]]:
    """``jnp.pad``'s ``pad_width`` (an int, a pair, or one pair per dim) as one pair per dim."""
    import numpy as np

    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64).reshape(-1, 2) if np.ndim(pad_width) else
                             np.asarray([[pad_width, pad_width]]), (ndim, 2))
    return [(int(lo), int(hi)) for lo, hi in widths]


def _pad_values(constant_values, ndim: int) -> list[tuple]:
    """``jnp.pad``'s ``constant_values`` (a number, ``(v,)``, ``(before, after)``, or one pair per dim) as
    one pair per dim, as numpy broadcasts it."""
    import numpy as np

    values = np.asarray(constant_values, dtype=object)
    pairs = np.broadcast_to(values.reshape(-1, 2) if values.size % 2 == 0 and values.ndim else values.reshape(-1, 1),
                            (ndim, 2))
    return [(lo, hi) for lo, hi in pairs]


def spatial_pad(array: jax.Array, pad_width, mode: str = "constant", constant_values=0, *,
                spatial_axes: Sequence, sliced: tuple | None = None) -> jax.Array:
    """``jnp.pad`` (a constant) of a block split along some dims, one dim after the other as ``jnp.pad``
    pads them (so a corner holds the later dim's value): along a split dim only the first and last blocks
    hold padding, and the padded dim is split into equal blocks again, so each device takes the few rows
    its new block needs from its neighbours (``reblock_halos``: none when two blocks pad evenly), never
    the whole dim.

    ``sliced=(axis, start, stop)``: ``array`` is to be sliced ``[start:stop]`` along split dim ``axis``
    first (``jnp.pad(x[:, :-1], ((0, 0), (1, 0)))``, a shift by one row): the slice and its padding are one
    re-blocking of the rows of ``array`` (its rows outside the slice padding too), so a slice whose rows do
    not split into equal blocks runs where the padded result does (one neighbour exchange of the rows
    shifted across each boundary)."""
    if mode not in ("constant", *BORDER_PADS):
        raise CallError(f"jnp.pad(mode={mode!r}) along a split dim",
                        fix="pad with a constant (mode='constant'), 'edge', 'wrap', 'reflect' or 'symmetric'")
    axes = [_axes(a) for a in spatial_axes]
    values = _pad_values(constant_values, array.ndim)
    widths = _pad_widths(pad_width, array.ndim)
    out = array
    if sliced is not None:
        out = _padded_slice(array, sliced, axes, widths, values)
    for i, (lo, hi) in enumerate(widths):
        if not (lo or hi) or (sliced is not None and i == sliced[0] % array.ndim):
            continue
        if axes[i] and mode != "constant":
            out = _pad_border(out, i, axes[i], lo, hi, mode)
        elif axes[i]:
            out = _reblock(out, i, axes[i], -lo, out.shape[i] * _shards(axes[i]) + lo + hi, "jnp.pad", values[i])
        else:
            widths = [(0, 0)] * array.ndim
            widths[i] = (lo, hi)
            out = jnp.pad(out, widths, mode) if mode != "constant" else \
                jnp.pad(out, widths, constant_values=[values[i]] * array.ndim)
    return out


def _padded_slice(x: jax.Array, sliced: tuple, axes: list[Axes], widths: list[tuple[int, int]],
                  values: list[tuple]) -> jax.Array:
    """``x[start:stop]`` along split dim ``axis`` (``sliced``) padded by ``widths[axis]`` with ``values[axis]``:
    the global rows ``[first - lo, first + taken + hi)`` of ``x`` re-blocked, those outside the slice's
    rows ``[first, first + taken)`` holding the padding."""
    axis, start, stop = sliced
    axis %= x.ndim
    total = x.shape[axis] * _shards(axes[axis])
    first, end, _ = slice(start, stop).indices(total)
    end = max(end, first)
    lo, hi = widths[axis]
    what = "jnp.pad of the slice [" + ":".join("" if b is None else str(b) for b in (start, stop)) + "]"
    return _reblock(x, axis, axes[axis], first - lo, end - first + lo + hi, what, values[axis], image=(first, end))


#: ``jnp.pad`` modes along a split dim whose padding comes from the border blocks' neighbours.
BORDER_PADS = ("edge", "wrap", "reflect", "symmetric")


def _pad_border(x: jax.Array, dim: int, axes: Axes, lo: int, hi: int, mode: str) -> jax.Array:
    """``jnp.pad(mode="edge" | "wrap" | "reflect" | "symmetric")`` along ``dim``, split over ``axes``: every
    block takes ``lo`` rows from the previous block and ``hi`` from the next (for ``wrap`` round a ring, so the
    first block gets the last rows of the image; for the others the border blocks make theirs from their own
    rows: the edge row repeated, or the rows next to it mirrored), which cover the
    rows of its block of the padded dim, split into equal blocks again: block ``p`` starts ``p * (new -
    old rows)`` rows into its extended block."""
    shards, rows = _shards(axes), x.shape[dim]
    out_rows = rows * shards + lo + hi
    if out_rows % shards:
        raise CallError(f"jnp.pad(mode={mode!r}) along dim {dim}, split over {' x '.join(map(repr, axes))} into "
                        f"{shards} blocks, gives {out_rows} rows, which do not split into {shards} equal blocks",
                        fix=f"make the result's size a multiple of {shards}, or map this dim to no mesh axis")
    if mode == "reflect" and max(lo, hi) >= rows:
        raise CallError(f"jnp.pad(mode='reflect') along dim {dim}, split over {' x '.join(map(repr, axes))} into "
                        f"blocks of {rows} rows, pads {max(lo, hi)} rows: a border block mirrors its own rows "
                        f"leaving its edge row out, so it would need {max(lo, hi) + 1} rows",
                        fix="pad by fewer rows than a block holds (or mode='symmetric', which keeps the edge row), use "
                        "fewer shards along this dim or a larger dim, or map it to no mesh axis")
    block = out_rows // shards
    extended = _exchange_dim(x, dim, lo, hi, axes, fill=mode)
    return jax.lax.dynamic_slice_in_dim(extended, _block_index(axes) * (block - rows), block, axis=dim)


def spatial_slice(x: jax.Array, axis: int, start, stop, step=None, *, axis_name) -> jax.Array:
    """``x[..., start:stop:step, ...]`` along dim ``axis``, split over ``axis_name``: the global rows
    ``start:stop`` split into equal blocks again, each device taking the rows its new block needs from
    its neighbours (none when the slice keeps the shard boundaries).  With a ``step`` (a nonzero int),
    the rows from the first the slice takes (the last, for a negative step) up to the last plus
    ``|step| - 1`` (padding beyond the image, never taken) are re-blocked, then each device takes every
    ``|step|``-th row of its block, and a negative step flips the result as :func:`spatial_flip` does
    (each block from its mirror device): the number of rows taken must split into equal blocks, and not
    be none (XLA's sharding pass fails on the derivative of a program holding an empty block)."""
    axes = _axes(axis_name)
    shards = _shards(axes)
    total = x.shape[axis] * shards
    what = "the slice [" + ":".join("" if b is None else str(b) for b in (start, stop, *(() if step is None else (step,))))\
        + "]"
    if step is not None and (not isinstance(step, int) or step == 0):
        raise CallError(f"{what} along a split dim: its step is not a nonzero int",
                        fix="slice with a nonzero int step (x[:, ::2], x[:, ::-1]), or map this dim to no mesh axis")
    taken = range(*slice(start, stop, step).indices(total))
    if not taken:
        raise CallError(f"{what} along dim {axis}, split over {' x '.join(map(repr, axes))} into {shards} blocks, "
                        "takes no rows: meshify refuses an empty slice of a split dim",
                        fix=f"take at least {shards} rows, or map this dim to no mesh axis")
    if step is None or step == 1:
        section = _as_section(x, axis, axes, taken[0], len(taken))
        return section if section is not None else _reblock(x, axis, axes, taken[0], len(taken), what)
    if len(taken) % shards:
        raise CallError(f"{what} along dim {axis}, split over {' x '.join(map(repr, axes))} into {shards} blocks, "
                        f"takes {len(taken)} rows, which do not split into {shards} equal blocks",
                        fix=f"take a multiple of {shards} rows, or map this dim to no mesh axis")
    out = _reblock(x, axis, axes, min(taken[0], taken[-1]), len(taken) * abs(step), what)
    out = jax.lax.slice_in_dim(out, 0, out.shape[axis], abs(step), axis=axis)
    if step > 0:
        return out
    spatial = [axes if d == axis % x.ndim else () for d in range(x.ndim)]
    return spatial_flip(out, axis, spatial_axes=spatial)  # the rows taken upwards, then reversed


def _as_section(x: jax.Array, axis: int, axes: Axes, first: int, count: int) -> jax.Array | None:
    """``x``'s global rows ``[first, first + count)`` along split dim ``axis`` (``x[..., : d // 2]``, a
    coupling layer's half) when re-blocking them would need rows from beyond the neighbouring device but they
    are a section as ``jnp.split`` cuts one (both bounds multiples of the shards): its chunks moved as
    :func:`split_sections` moves them, each device sending and receiving at most its block.  None otherwise."""
    shards, rows = _shards(axes), x.shape[axis % x.ndim]
    end = first + count
    if first % shards or end % shards or max(reblock_halos(rows, shards, first, count)) <= rows:
        return None
    indices = [i for i in (first, end) if 0 < i < rows * shards]
    return split_sections(x, indices, axis, axis_name=axes)[1 if first > 0 else 0]


def spatial_entry(x: jax.Array, axis: int, index, *, keep: bool, axis_name) -> jax.Array:
    """``x[..., index, ...]`` (``keep=False``) or the one-entry slice ``x[..., index:index + 1, ...]``
    (``keep=True``: ``x[:, -1:]``, ``x[:, :1]``) along dim ``axis``, split over ``axis_name``: the global
    entry, the same on every device.  Each device takes the entry at the index's place in its block, one
    all-gather brings them together, and the owner's is kept (exact; its derivative goes back to the
    owner's block alone).  ``index`` is a Python int known when tracing; out of range is an IndexError,
    as on one device."""
    from meshify.runtime.ops import all_gather

    axes = _axes(axis_name)
    shards = _shards(axes)
    block = x.shape[axis]
    total = block * shards
    try:
        i = operator.index(index)
    except TypeError:
        raise CallError(f"index {index!r} along dim {axis}, split over {' x '.join(map(repr, axes))}, is not an int",
                        fix="index with an int (x[:, -1]) or an integer array") from None
    if not -total <= i < total:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size {total}")
    i %= total
    owner, place = divmod(i, block)
    entries = all_gather(jax.lax.slice_in_dim(x, place, place + 1, axis=axis), axes, axis)
    entry = jax.lax.slice_in_dim(entries, owner, owner + 1, axis=axis)
    return entry if keep else jax.lax.squeeze(entry, (axis,))


def diagonal_block(x: jax.Array, axis1: int, axis2: int, *, split: int, axis_name) -> jax.Array:
    """``x`` with its whole dim of the pair ``axis1``, ``axis2`` (two dims of one size, the other of them,
    ``split``, split over ``axis_name``) cut to this device's block of it: the square block that holds
    the device's share of the pair's diagonal.  ``jnp.diagonal`` (``jnp.trace``) of it is the device's
    block of the global diagonal (its share of the trace); no communication."""
    axes = _axes(axis_name)
    axis1, axis2, split = axis1 % x.ndim, axis2 % x.ndim, split % x.ndim
    whole = axis2 if split == axis1 else axis1
    block = x.shape[split]
    if x.shape[whole] != block * _shards(axes):
        raise CallError(f"the diagonal of dims {axis1} and {axis2}: dim {split}, split over "
                        f"{' x '.join(map(repr, axes))}, has {block * _shards(axes)} entries, dim {whole} "
                        f"{x.shape[whole]}: meshify takes the diagonal of a split dim against a dim of its size",
                        fix="take the diagonal of a square pair of dims, or map this dim to no mesh axis")
    return jax.lax.dynamic_slice_in_dim(x, _block_index(axes) * block, block, axis=whole)


def spatial_concatenate(arrays: Sequence[jax.Array], axis: int = 0, dtype=None, *, axis_name,
                        dim: str | None = None) -> jax.Array:
    """``jnp.concatenate(arrays, axis)`` along a dim split over ``axis_name`` in every array: the result is
    cut into equal blocks again, and each device takes the blocks of each array its new block overlaps
    from the devices holding them (one ``ppermute`` of a whole block per array and distance,
    :func:`meshify._halos.concat_shifts`; a block already in place moves nowhere), never the whole dim."""
    axes = _axes(axis_name)
    shards = _shards(axes)
    axis %= arrays[0].ndim
    kind = jnp.result_type(*arrays) if dtype is None else dtype
    rows = [a.shape[axis] for a in arrays]
    block = sum(rows)
    pos = _block_index(axes)
    shape = [1] * arrays[0].ndim
    shape[axis] = block
    row = pos * block + jax.lax.broadcasted_iota(jnp.int32, tuple(shape), axis)  # global rows of this block
    out, offset = None, 0
    for a, r in zip(arrays, rows):
        a = a.astype(kind)
        shifts = concat_shifts(r, shards, offset, block)
        low, high = min(shifts), max(shifts)
        parts = []
        for d in range(low, high + 1):
            if d == 0:
                parts.append(a)
            elif d in shifts:
                needed = set(shifts[d])
                order, pairs = _perm(axes, lambda p, d=d, needed=needed: p + d if p in needed else None)
                parts.append(jax.lax.ppermute(a, order, pairs))
            else:
                parts.append(jnp.zeros_like(a))
        extended = parts[0] if len(parts) == 1 else jnp.concatenate(parts, axis=axis)
        widths = [(0, 0)] * a.ndim
        widths[axis] = (block, block)  # room for a slice starting before or ending after what came in
        extended = jnp.pad(extended, widths)
        start = pos * block - offset - (pos + low) * r + block
        piece = jax.lax.dynamic_slice_in_dim(extended, start, block, axis=axis)
        inside = (row >= offset) & (row < offset + r * shards)
        out = jnp.where(inside, piece, jnp.zeros((), kind) if out is None else out)
        offset += r * shards
    assert out is not None  # (one array at least: the rewrite passes every operand)
    if dim is not None:  # the joined dim's size in this call, for the checks of arrays lined up with it
        from meshify.runtime._bind import CALL_SIZES

        sizes = CALL_SIZES.get()
        if isinstance(sizes, dict):
            sizes[dim] = offset
    return out


def glu(x: jax.Array, axis: int, axis_name) -> jax.Array:
    """``jax.nn.glu(x, axis)`` along a dim split over ``axis_name``: its two halves as :func:`split_sections`
    moves them (each device then holds its block of each), then ``a * sigmoid(b)`` on the blocks; the result
    split as ``x`` was."""
    a, b = split_sections(x, 2, axis, axis_name=axis_name)
    return a * jax.nn.sigmoid(b)


def sectioned(ary: jax.Array, sections: int, axis: int = 0, *, axis_name) -> jax.Array:
    """A fused dim split over ``axis_name`` (``3 * d_model`` of a QKV projection) rearranged so that each
    device holds its block of every one of ``sections`` equal sections, side by side (``[q_k | k_k | v_k]``):
    what a reshape of the dim into ``(sections, heads, head_dim)`` with the heads split needs locally.  The
    chunks move as :func:`split_sections` moves them."""
    return jnp.concatenate(split_sections(ary, sections, axis, axis_name=axis_name), axis=axis)


def split_sections(ary: jax.Array, indices_or_sections, axis: int = 0, *, axis_name,
                   uneven: bool = False) -> list[jax.Array]:
    """``jnp.split(ary, n, axis)`` (or at ``indices``) along a dim split over ``axis_name`` (a fused QKV
    projection's ``3 * d_model``, a multi-query one's ``[q | k | v]``): each device's block holds pieces of
    whole sections, so the rows move until each device holds its block of every section
    (:func:`meshify._halos.section_rounds`): one ``ppermute`` per distinct way the chunks move, each device
    sending and receiving at most its block in all, never the whole dim.  Returns the sections, each split
    over ``axis_name`` as ``ary`` was; each must split into equal blocks.  ``uneven``: ``jnp.array_split``'s
    sections (a count that does not divide the dim gives sections one row apart)."""
    axes = _axes(axis_name)
    shards = _shards(axes)
    axis %= ary.ndim
    rows = ary.shape[axis]
    total = rows * shards
    where = " x ".join(map(repr, axes))
    function = "jnp.array_split" if uneven else "jnp.split"
    widths = section_widths(indices_or_sections if isinstance(indices_or_sections, int)
                            else [int(i) for i in indices_or_sections], total, uneven)
    if widths is None:
        n = indices_or_sections
        raise CallError(f"jnp.split of dim {axis} ({total} rows, split over {where}) into {n} sections: its "
                        f"{total} rows do not split into {n} equal sections", fix=f"make the dim a multiple of {n}")
    if any(w < 0 for w in widths):
        raise CallError(f"{function} of dim {axis} ({total} rows) at {list(indices_or_sections)}: sections of "
                        f"{widths} rows (jnp.split refuses negative sizes too)",
                        fix=f"give increasing indices from 0 to {total}")
    bad = [w for w in widths if w % shards]
    if bad:
        n = len(widths)
        raise CallError(f"{function} of dim {axis} (split over {where} into {shards} blocks of {rows} rows) into "
                        f"{n} sections of {', '.join(map(str, widths))} rows: a section of {bad[0]} rows does not "
                        f"split into {shards} equal blocks",
                        fix=f"make every section a multiple of {shards} rows, or map the dim to no mesh axis")
    chunk, sizes = section_chunks(widths, shards)
    m = sum(sizes)
    chunks = ary.reshape(ary.shape[:axis] + (m, chunk) + ary.shape[axis + 1:])
    pos = _block_index(axes)
    groups = section_groups(sizes, shards)  # rounds moving chunks alike: one ppermute
    received, slots = [], []
    for to, rounds in groups.items():
        pieces = [jnp.take(chunks, jnp.asarray(send, jnp.int32)[pos], axis=axis) for send, _ in rounds]
        piece = pieces[0] if len(pieces) == 1 else jnp.stack(pieces, axis)
        if any(t != j for j, t in enumerate(to)):
            order, pairs = _perm(axes, lambda i, to=to: to.index(i))
            piece = jax.lax.ppermute(piece, order, pairs)
        received.extend([piece] if len(pieces) == 1 else
                        [jax.lax.index_in_dim(piece, r, axis, keepdims=False) for r in range(len(pieces))])
        slots.extend(slot for _, slot in rounds)
    place = [[0] * m for _ in range(shards)]  # device i: chunk c of its sections' blocks -> the piece holding it
    for r, slot in enumerate(slots):
        for i in range(shards):
            place[i][slot[i]] = r
    out = jnp.take(jnp.stack(received, axis), jnp.asarray(place, jnp.int32)[pos], axis=axis)
    out = out.reshape(ary.shape[:axis] + (m * chunk,) + ary.shape[axis + 1:])
    bounds = [sum(sizes[:t]) * chunk for t in range(len(sizes) + 1)]
    return [jax.lax.slice_in_dim(out, a, b, axis=axis) for a, b in itertools.pairwise(bounds)]


# -- periodic and mirrored -------------------------------------------------------------------------------------


def _along(axis, ndim: int) -> list[int]:
    axis = range(ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    return sorted({a % ndim for a in axis})


def spatial_roll(a: jax.Array, shift, axis=None, *, spatial_axes: Sequence) -> jax.Array:
    """``jnp.roll`` of a block split along some dims (periodic boundaries): along a split dim the block
    ``q`` places before and the last ``t`` rows of the one before it arrive by ``ppermute`` with
    wrap-around (``shift = q * rows + t``): ``t`` rows when the shift is under a block."""
    axes = [_axes(x) for x in spatial_axes]
    if axis is None:
        if any(axes):
            raise CallError("jnp.roll(axis=None) of an array split along a dim", fix="name the axes: axis=(1, 2)")
        return jnp.roll(a, shift)
    dims = (axis,) if isinstance(axis, int) else tuple(axis)
    shifts = (shift,) * len(dims) if isinstance(shift, int) else tuple(shift)
    out = a
    for d, s in zip(dims, shifts):
        d %= a.ndim
        if not axes[d]:
            out = jnp.roll(out, s, axis=d)
            continue
        n, rows = _shards(axes[d]), out.shape[d]
        q, t = divmod(s % (rows * n), rows)
        whole = out
        if q % n:
            order, pairs = _perm(axes[d], lambda p, q=q, n=n: (p - q) % n)
            whole = jax.lax.ppermute(out, order, pairs)
        if not t:
            out = whole
            continue
        order, pairs = _perm(axes[d], lambda p, q=q, n=n: (p - q - 1) % n)
        tail = jax.lax.ppermute(jax.lax.slice_in_dim(out, rows - t, rows, axis=d), order, pairs)
        out = jnp.concatenate([tail, jax.lax.slice_in_dim(whole, 0, rows - t, axis=d)], axis=d)
    return out


def spatial_flip(m: jax.Array, axis=None, *, spatial_axes: Sequence) -> jax.Array:
    """``jnp.flip`` of a block split along some dims: along a split dim the blocks swap with their mirror
    device (one ``ppermute`` of the block), then each block is flipped locally."""
    axes = [_axes(x) for x in spatial_axes]
    dims = _along(axis, m.ndim)
    out = m
    for d in dims:
        if axes[d]:
            n = _shards(axes[d])
            order, pairs = _perm(axes[d], lambda p, n=n: n - 1 - p)
            out = jax.lax.ppermute(out, order, pairs)
    return jnp.flip(out, axis=tuple(dims))


def spatial_diff(a: jax.Array, axis: int, prepend=None, append=None, *, axis_name) -> jax.Array:
    """``jnp.diff(a, axis=axis, prepend=p)`` (``append=``) along a dim split over ``axis_name``, one end of one
    row given: the row before each block comes from the previous device (after it: from the next; one
    ``ppermute``), the first (last) device's is the end, so each block keeps its length."""
    axes = _axes(axis_name)
    axis %= a.ndim
    end, first = (prepend, True) if prepend is not None else (append, False)
    dtype = jnp.result_type(a, end)
    out = _exchange_dim(a, axis, 1 if first else 0, 0 if first else 1, axes).astype(dtype)
    rows, edge = out.shape[axis], 0 if first else _shards(axes) - 1
    at = 0 if first else rows - 1
    row = jax.lax.slice_in_dim(out, at, at + 1, axis=axis)
    end = jnp.broadcast_to(jnp.asarray(end, dtype), row.shape)
    row = jnp.where(_block_index(axes) == edge, end, row)
    rest = jax.lax.slice_in_dim(out, 1, rows, axis=axis) if first else jax.lax.slice_in_dim(out, 0, rows - 1, axis=axis)
    return jnp.diff(jnp.concatenate([row, rest] if first else [rest, row], axis=axis), axis=axis)


# -- resizing -----------------------------------------------------------------------------------------------


_LINEAR = ("linear", "bilinear", "trilinear", "triangle")


def spatial_resize(image: jax.Array, shape: Sequence[int], method, antialias: bool = True, precision=None,
                   *, spatial_axes: Sequence) -> jax.Array:
    """``jax.image.resize`` of a block split along some dims (``shape``: the global result's).  Nearest:
    local where a split dim grows or shrinks by an integer factor.  Linear upsampling by an integer
    factor: a one-row halo from each neighbour (the edge row itself at the image border), then the
    extended block is resized and the extra rows dropped."""
    from jax._src.image.scale import ResizeMethod

    axes = [_axes(x) for x in spatial_axes]
    kind = ResizeMethod.from_string(method) if isinstance(method, str) else method
    local_shape = list(shape)
    out = image
    halo_dims = []
    for d, a in enumerate(axes):
        if not a:
            continue
        n, rows = _shards(a), image.shape[d]
        size = shape[d]
        if size % n:
            raise CallError(f"jax.image.resize to {size} rows along dim {d}, split into {n} blocks",
                            fix=f"resize to a multiple of {n} rows, or map this dim to no mesh axis")
        local_shape[d] = size // n
        up = size % (rows * n) == 0
        down = (rows * n) % size == 0 and rows % ((rows * n) // size) == 0
        if kind == ResizeMethod.NEAREST and (up or down):
            continue
        if kind == ResizeMethod.LINEAR and up:
            halo_dims.append((d, size // (rows * n)))
            continue
        raise CallError(f"jax.image.resize(method={method!r}) from {rows * n} to {size} rows along dim {d}, split "
                        f"into {n} blocks: meshify resizes a split dim with 'nearest' by an integer factor, or "
                        "'linear' upsampling by an integer factor",
                        fix="resize by an integer factor (nearest or linear up), or map this dim to no mesh axis")
    options = {"antialias": antialias, **({} if precision is None else {"precision": precision})}
    if not halo_dims:
        return jax.image.resize(out, tuple(local_shape), method, **options)
    for d, _ in halo_dims:
        out = _exchange_dim(out, d, 1, 1, axes[d], fill="edge")
    extended = list(local_shape)
    for d, k in halo_dims:
        extended[d] = local_shape[d] + 2 * k
    out = jax.image.resize(out, tuple(extended), method, **options)
    for d, k in halo_dims:
        out = jax.lax.slice_in_dim(out, k, k + local_shape[d], axis=d)
    return out
