"""Window and re-blocking ops along split spatial dims: pooling (``jax.lax.reduce_window``), ``jnp.pad``,
slices (``x[:, 1:-1]``), ``jnp.roll``, ``jnp.flip`` and ``jax.image.resize``.

Each keeps the image split and moves only what a block's new rows need (:mod:`meshify.runtime._spatial`):

- pooling: the halo a window reaches across the shard boundary, as for a convolution
  (:func:`convolution.window_halo`), the pooling's init value beyond the image border; a window that
  lines up with the blocks (2x2, stride 2) exchanges nothing;
- pad and slice change a split dim's length, so the padded (sliced) dim is cut into equal blocks again:
  each device takes the few rows its new block needs from its neighbours (none when two blocks pad
  evenly, or a slice keeps the boundaries), never the whole dim; ``constant_values=`` fills the rows
  beyond the image, which only the border devices hold; a slice with a negative step (``x[:, 13:1:-1]``)
  takes the same rows upwards, then flips them as ``jnp.flip`` does;
- roll: the rows that wrap round from the previous block (and a whole block when the shift is longer);
- flip: each block from its mirror device, then flipped locally;
- nearest resize by an integer factor: local (``jnp.repeat`` is local too: its rule is in ``shapes``);
  linear upsampling: a one-row halo.

Where the sizes are known when rewriting (``@mesh(dims=...)``) each exchange is recorded with its bytes
and a length that cannot split evenly is refused at its place; otherwise the runtime checks at trace time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import libcst as cst

from meshify._halos import concat_shifts, reblock_halos, section_chunks, section_groups
from meshify.annotate._types import BROADCAST, Layout
from meshify.errors import UnsupportedError
from meshify.rewrite._collectives import axes_text, halo_kind, sections_kind
from meshify.rewrite._values import Array, Operand, Static, array
from meshify.rewrite.rules._api import (
    Call,
    Convert,
    Emitted,
    Lowering,
    MeshAxes,
    Ref,
    RuleContext,
    keep,
    op,
    unknown_call,
)
from meshify.rewrite.rules.convolution import Halo, _axes_code, _exchanges, window_halo
from meshify.rewrite.rules.lookups import _sliced_dim


def _array(call: Call, name: str) -> Operand | None:
    o = call.params.get(name)
    return o if o is not None and isinstance(o.value, Array) else None


def _literal(call: Call, name: str, default: object = None) -> object:
    """A parameter's literal value, ``default`` where not given, ``...`` where not a literal."""
    o = call.params.get(name)
    if o is None:
        return default
    if isinstance(o.value, Static) and o.value.known:
        return o.value.literal
    return ...


def _short(call: Call) -> str:
    return call.name.rsplit(".", 1)[-1]


def _slab(layout: Layout, dim: int, whole: bool = False, resized: tuple[int, ...] = ()) -> Layout:
    """The layout of what one exchange moves along ``dim``: one row (``dim`` sized 1), or the whole block;
    the dims ``resized`` (re-blocked before, their new local length counted in the rows) sized 1 too."""
    if whole:
        return Layout(layout.dims, layout.axes)
    dims, axes = list(layout.dims), list(layout.axes)
    for d in (dim, *resized):
        dims[d], axes[d] = BROADCAST, ()
    return Layout(tuple(dims), tuple(axes))


def _record(ctx: RuleContext, layout: Layout, dim: int, rows: int | None, what: str, detail: str, whole: bool = False,
            resized: dict[int, int] | None = None) -> Emitted:
    """One ppermute along split ``dim`` of ``rows`` rows (None: known at trace time) or the whole block.
    ``resized``: dims re-blocked before this exchange -> their new local length (what the slab holds)."""
    resized = resized or {}
    if rows is not None and resized:
        return replace(_record(ctx, layout, dim, rows, what, detail), kind=halo_kind(rows * math.prod(resized.values())),
                       layout=_slab(layout, dim, resized=tuple(resized)))
    axes = layout.axes[dim]
    amount = "its block" if whole else (f"{rows} row{'s' * (rows != 1)}" if rows is not None else "rows")
    unknown = "" if whole or rows is not None else "; how many follows from the sizes at trace time"
    return Emitted(halo_kind(1 if whole or rows is None else rows), axes, _slab(layout, dim, whole),
                   layout.dims[dim], f"halo over {axes_text(axes)}: {amount} of {what!r} along split "
                   f"{layout.dims[dim]!r}, {detail} (ppermute){unknown}")


def _split_error(ctx: RuleContext, where, call: Call, layout: Layout, dims: list[int], why: str,
                 fix: str | None = None):
    names = ", ".join(repr(layout.dims[d]) for d in dims)
    unmapped = ", ".join(f"{layout.dims[d]!r}: None" for d in dims)
    return ctx.error(UnsupportedError, where, f"{_short(call)} along split {names} ({layout.describe()}): {why}",
                     fix or f"map {names} to no mesh axis (rules={{{unmapped}}}), or call it outside the @mesh function")


def _whole(x: Operand, purpose: str) -> Convert:
    layout = array(x).layout
    return Convert(x, layout.with_partial(()), purpose)


def _spatial_fill(layout: Layout) -> tuple[str, cst.BaseExpression]:
    return "spatial_axes", cst.parse_expression(_axes_code(list(layout.axes)))


def _template(call: Call, runtime: str, first: str, names: tuple[str, ...], extra: str) -> tuple[str, tuple]:
    """``{mr}.runtime({first}, <each given parameter of names by keyword>, extra)``, and its fill."""
    parts = [f"{{mr}}.{runtime}({{{first}}}"]
    fill: list = [(first, Ref(0))]
    for name in names:
        o = call.params.get(name)
        if o is not None:
            parts.append(f", {name}={{{name}}}")
            fill.append((name, o.node))
    parts.append(f", {extra}={{{extra}}})")
    return "".join(parts), tuple(fill)


# -- pooling -----------------------------------------------------------------------------------------------


_REDUCE_WINDOW = ("init_value", "computation", "window_dimensions", "window_strides", "padding", "base_dilation",
                  "window_dilation")


def _subject(call: Call, param: str):
    """The image an op works on (None: not a named array), its layout, the whole value it returns,
    and the positions of its split dims."""
    x = _array(call, param)
    if x is None:
        return None
    layout = array(x).layout
    return x, layout, Array(layout.with_partial(())), [d for d in range(layout.rank) if layout.axes[d]]


@op("jax.lax.reduce_window", reads=None)
def _reduce_window(ctx: RuleContext, call: Call):
    subject = _subject(call, "operand")
    if subject is None:
        return unknown_call(ctx, call)
    x, layout, value, split = subject
    if not split:
        return Lowering(value, (_whole(x, _short(call)),))
    dilation = _literal(call, "base_dilation")
    if dilation is ... or (dilation is not None and any(dilation[d] != 1 for d in split)):
        raise _split_error(ctx, call.params["base_dilation"].original, call, layout, split,
                           "base_dilation (an upsampling window) is not modelled there",
                           "upsample with jnp.repeat first, or map that dim to no mesh axis")
    halos = _pool_halos(ctx, call, layout, split)
    template, fill = _template(call, "halo_reduce_window", "operand", _REDUCE_WINDOW, "spatial_axes")
    fill = (*fill, _spatial_fill(layout))
    emitted = _exchanges(ctx, x, layout, split, [layout.axes[d] for d in split], halos)
    return Lowering(value, (_whole(x, "a pooling window"),), template, fill, emitted)


def _pool_halos(ctx: RuleContext, call: Call, layout: Layout, split: list[int]) -> list[Halo | None]:
    """Each split dim's halo where the window, strides and padding are literals (else None)."""
    windows, strides = _literal(call, "window_dimensions"), _literal(call, "window_strides")
    dilation, padding = _literal(call, "window_dilation"), _literal(call, "padding", "VALID")
    if ... in (windows, strides, dilation, padding) or not isinstance(windows, tuple | list):
        return [None] * len(split)
    out = []
    for d in split:
        window = (windows[d] - 1) * (dilation[d] if dilation else 1) + 1
        stride = strides[d] if strides else 1
        out.append(window_halo(ctx, call, "reduce_window", layout.dims[d], layout.axes[d], window, stride, padding, d))
    return out


# -- pad and slices: re-blocking ------------------------------------------------------------------------------


def _reblock_records(ctx: RuleContext, where, call: Call, x: Operand, layout: Layout, dim: int, start: int | None,
                     end: int | None, what: str, resized: dict[int, int] | None = None) -> list[Emitted]:
    """The exchanges of re-blocking split ``dim`` to its global rows ``[start, end)`` (ends relative to
    the global length when negative, as a slice's), refused here when the sizes are known and the result
    cannot split evenly or needs more than a neighbour's block."""
    total, shards = ctx.sizes.get(layout.dims[dim]), ctx.mesh.size(layout.axes[dim])
    name = ctx.code(x.original)
    if total is None or start is None or end is None:
        farther = " (a section of the dim, as jnp.split cuts one, where they lie farther)" if what == "the slice" else ""
        return [_record(ctx, layout, dim, None, name, f"the rows its new block needs after {what}, from each "
                        f"neighbour{farther}")]
    out_rows = end - start
    if out_rows <= 0 or out_rows % shards or total % shards:
        raise ctx.error(UnsupportedError, where, f"{what} along split {layout.dims[dim]!r} (over "
                        f"{axes_text(layout.axes[dim])}) gives {out_rows} rows, which do not split into {shards} "
                        "equal blocks", f"make the result a multiple of {shards} rows, or map {layout.dims[dim]!r} to "
                        f"no mesh axis (rules={{{layout.dims[dim]!r}: None}})")
    before, after = reblock_halos(total // shards, shards, start, out_rows)
    if max(before, after) > total // shards:
        raise ctx.error(UnsupportedError, where, f"{what} along split {layout.dims[dim]!r} moves a block by more "
                        f"than its {total // shards} rows: it would need rows from beyond the neighbouring device",
                        f"take the parts of a fused dim with jnp.split(x, [i, j], axis={dim - layout.rank}) (it moves "
                        f"sections whole), use fewer shards along {layout.dims[dim]!r}, or map it to no mesh axis "
                        f"(rules={{{layout.dims[dim]!r}: None}})")
    if resized is not None:
        resized[dim] = out_rows // shards  # what later exchanges of the same value move along this dim
    return [_record(ctx, layout, dim, rows, name, f"{side} its new block after {what}, from the {source} device",
                    resized={d: n for d, n in (resized or {}).items() if d != dim})
            for rows, side, source in ((before, "before", "previous"), (after, "after", "next")) if rows > 0]


#: Modes whose padding is a linear map of the array (of a partial sum: the partial sum of the padded array).
_LINEAR_PADS = ("edge", "reflect", "symmetric", "wrap", "mean")


@op("jax.numpy.pad", reads=("array", "pad_width", "mode", "kwargs"))
def _pad(ctx: RuleContext, call: Call):
    x = _array(call, "array")
    if x is None:
        return unknown_call(ctx, call)
    layout = array(x).layout
    widths = _pad_widths(_literal(call, "pad_width"), layout.rank)
    padded = [d for d in range(layout.rank) if layout.axes[d] and (widths is None or any(widths[d]))]
    mode = _literal(call, "mode", "constant")
    options = [name for name in call.params if name not in ("array", "pad_width", "mode")]
    linear = mode in _LINEAR_PADS or (mode == "constant" and _zeros(_pad_values(ctx, call)))
    value = Array(layout if linear else layout.with_partial(()), array(x).origin)
    if not padded:  # local: as written, a partial sum first summed unless the padding is linear
        return keep(value) if linear else Lowering(value, (_whole(x, "jnp.pad"),))
    border = mode in _BORDER_PADS and not options
    unmodelled = ["mode"] if mode != "constant" and not border else \
        [n for n in options if n != "constant_values"]
    if unmodelled:
        o = call.params[unmodelled[0]]
        raise _split_error(ctx, o.original, call, layout, padded, f"{unmodelled[0]}={ctx.code(o.original)} is not "
                           "modelled along a split dim", "pad with a constant (mode='constant', constant_values=...), "
                           "mode='edge', 'wrap', 'reflect' or 'symmetric', or map that dim to no mesh axis")
    emitted: list[Emitted] = []
    where = call.params["pad_width"].original
    resized: dict[int, int] = {}
    if border:
        for d in padded:
            emitted += _border_records(ctx, where, x, layout, d, widths[d] if widths is not None else None, mode,
                                       resized)
        padded = []
    shift = _slice_padded(ctx, x, padded) if mode == "constant" else None
    for d in padded:
        if shift is not None and d == shift.dim:
            emitted.append(_record(ctx, layout, d, None, ctx.code(x.original), "the rows its new block needs after "
                                   "the slice and jnp.pad (one re-blocking: a shift), from each neighbour"))
            continue
        total = ctx.sizes.get(layout.dims[d])
        lo, hi = widths[d] if widths is not None else (None, None)
        end = None if total is None or lo is None else total + hi
        emitted += _reblock_records(ctx, where, call, x, layout, d, None if lo is None else -lo, end, "jnp.pad", resized)
    template, fill = _template(call, "spatial_pad", "array", ("pad_width", "mode", "constant_values"), "spatial_axes")
    fill = (*fill, _spatial_fill(layout))
    if shift is not None:  # the slice's base padded: mr.spatial_pad(x, ..., sliced=(1, None, -1))
        template = template[:-1] + ", sliced=({sliced_axis}, {sliced_start}, {sliced_stop}))"
        fill = (*fill, ("sliced_axis", shift.dim), ("sliced_start", shift.start), ("sliced_stop", shift.stop))
        x = Operand(x.value, x.original, shift.base)
    return Lowering(value, (Convert(x, value.layout, "jnp.pad"),), template, fill, tuple(emitted))


@op("jax.lax.pad", reads=("operand", "padding_value", "padding_config"))
def _lax_pad(ctx: RuleContext, call: Call):
    """``jax.lax.pad(x, value, ((lo, hi, interior), ...))`` (RWKV's token shift, ``(1, -1, 0)`` along time): local
    where no split dim is padded, a partial sum first summed unless the padding value is 0; padding a split dim
    (its rows would move between the devices) is refused with the fix, jnp.pad, whose halo is exchanged."""
    x = _array(call, "operand")
    if x is None:
        return unknown_call(ctx, call)
    layout = array(x).layout
    config = _literal(call, "padding_config")
    known = isinstance(config, tuple | list) and len(config) == layout.rank and all(
        isinstance(t, tuple | list) and len(t) == 3 and all(type(v) is int for v in t) for t in config)
    padded = [d for d in range(layout.rank) if layout.axes[d] and (not known or any(config[d]))]
    if padded:
        raise _split_error(ctx, call.params["padding_config"].original, call, layout, padded,
                           "its rows would move between the devices" if known else "the padding_config is not a "
                           "literal of (low, high, interior) triples, one per dim",
                           "pad the split dim with jnp.pad(x, ((lo, hi), ...)) (it exchanges the rows each device "
                           "needs; a negative pad is a slice: jnp.pad(x[:, :-1], ((0, 0), (1, 0), (0, 0)))), or map "
                           + " and ".join(f"{layout.dims[d]!r}" for d in padded) + " to no mesh axis (rules={"
                           + ", ".join(f"{layout.dims[d]!r}: None" for d in padded) + "})")
    fill = call.params["padding_value"]
    if isinstance(fill.value, Array) and (fill.value.layout.rank or fill.value.layout.partial):
        raise ctx.error(UnsupportedError, fill.original, f"jax.lax.pad's padding_value {ctx.code(fill.original)} is "
                        f"not a whole scalar ({fill.value.layout.describe()})", "pad with a number, or a scalar that is "
                        "the same on every device")
    linear = isinstance(fill.value, Static) and fill.value.known and _zeros(fill.value.literal)
    value = Array(layout if linear else layout.with_partial(()), array(x).origin)
    return keep(value) if linear or not layout.partial else Lowering(value, (_whole(x, "jax.lax.pad"),))


@dataclass(frozen=True, slots=True)
class PaddedSlice:
    """A slice of split ``dim`` (``x[:, :-1]``, no step) that ``jnp.pad`` pads along that dim: the slice's
    base and bounds as rewritten, for ``mr.spatial_pad(base, ..., sliced=(dim, start, stop))``."""

    dim: int
    base: cst.BaseExpression
    start: cst.BaseExpression
    stop: cst.BaseExpression


def _slice_padded(ctx: RuleContext, x: Operand, padded: list[int]) -> PaddedSlice | None:
    """``x`` written as a slice of one padded split dim (``jnp.pad(x[:, :-1], ((0, 0), (1, 0)))``): the slice
    the interpreter lowered to ``mr.spatial_slice(base, dim, start, stop, axis_name=...)`` and nothing after
    it, taken apart so that the slice and the padding are one re-blocking (the slice's rows alone need not
    split into equal blocks, the padded rows do).  None otherwise."""
    node = x.node
    if not (isinstance(x.original, cst.Subscript) and isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name)
            and node.func.value.value == ctx.mr and node.func.attr.value == "spatial_slice"):
        return None
    args = node.args
    if len(args) != 5 or any(a.keyword is not None or a.star for a in args[:4]) \
            or not isinstance(args[1].value, cst.Integer) or int(args[1].value.value) not in padded:
        return None
    return PaddedSlice(int(args[1].value.value), args[0].value, args[2].value, args[3].value)


#: Modes padding a split dim from the border blocks' neighbours (runtime/_spatial.py's BORDER_PADS).
_BORDER_PADS = ("edge", "wrap", "reflect", "symmetric")


def _border_records(ctx: RuleContext, where, x: Operand, layout: Layout, dim: int, pads: tuple[int, int] | None,
                    mode: str, resized: dict[int, int]) -> list[Emitted]:
    """The exchanges of ``jnp.pad(mode="edge" | "wrap" | "reflect" | "symmetric")`` along split ``dim``: ``lo``
    rows from the previous block and ``hi`` from the next (round a ring for ``wrap``; the border blocks repeat
    their edge row for ``edge``, mirror their own rows for ``reflect`` and ``symmetric``), refused here when
    the sizes are known and the result cannot split evenly or a pad is wider than a block (for ``reflect``, as
    wide: its mirror leaves the edge row out)."""
    total, shards = ctx.sizes.get(layout.dims[dim]), ctx.mesh.size(layout.axes[dim])
    name = ctx.code(x.original)
    source = {"wrap": "wrapping round from the other end of the image",
              "edge": "the border devices repeating their edge row"}.get(mode, "the border devices mirroring their own rows")
    if pads is None or total is None:
        return [_record(ctx, layout, dim, None if pads is None else rows, name,
                        f"{side} its block for jnp.pad(mode={mode!r}), from the {device} device ({source})")
                for rows, side, device in (((pads or (1, 1))[0], "before", "previous"),
                                           ((pads or (1, 1))[1], "after", "next")) if rows]
    lo, hi = pads
    if (total + lo + hi) % shards or total % shards:
        raise ctx.error(UnsupportedError, where, f"jnp.pad(mode={mode!r}) along split {layout.dims[dim]!r} (over "
                        f"{axes_text(layout.axes[dim])}) gives {total + lo + hi} rows, which do not split into "
                        f"{shards} equal blocks", f"make the result a multiple of {shards} rows, or map "
                        f"{layout.dims[dim]!r} to no mesh axis (rules={{{layout.dims[dim]!r}: None}})")
    if max(lo, hi) + (mode == "reflect") > total // shards:
        raise ctx.error(UnsupportedError, where, f"jnp.pad(mode={mode!r}) along split {layout.dims[dim]!r} pads "
                        f"{'as many rows as or ' if mode == 'reflect' else ''}more than a block of {total // shards} "
                        "rows: it would need rows from beyond the neighbouring device", f"pad less, use fewer shards along {layout.dims[dim]!r}, or map it to no "
                        f"mesh axis (rules={{{layout.dims[dim]!r}: None}})")
    out = [_record(ctx, layout, dim, rows, name, f"{side} its block for jnp.pad(mode={mode!r}), from the {device} "
                   f"device ({source})", resized={d: n for d, n in resized.items() if d != dim})
           for rows, side, device in ((lo, "before", "previous"), (hi, "after", "next")) if rows]
    resized[dim] = (total + lo + hi) // shards
    return out


def _pad_values(ctx: RuleContext, call: Call) -> object:
    """``constant_values=`` as written (0 where not given; ``...``: a Python value not known now);
    refused at its place where it is an array (it would have to be the same on every device)."""
    o = call.params.get("constant_values")
    if o is None:
        return 0
    if not isinstance(o.value, Static):
        raise ctx.error(UnsupportedError, o.original, f"jnp.pad(constant_values={ctx.code(o.original)}): an array",
                        "write constant_values= as a number or (before, after) pairs of numbers")
    return o.value.literal if o.value.known else ...


def _zeros(values: object) -> bool:
    """Whether ``constant_values`` (a number, or nested pairs of numbers) is zero everywhere."""
    if isinstance(values, tuple | list):
        return all(_zeros(v) for v in values)
    return isinstance(values, int | float) and values == 0


def _pad_widths(given, rank: int) -> list[tuple[int, int]] | None:
    """``jnp.pad``'s ``pad_width`` literal as one pair per dim (None where not a literal)."""
    if isinstance(given, int):
        return [(given, given)] * rank
    if isinstance(given, tuple | list) and given and all(isinstance(v, int) for v in given):
        pair = tuple(given) * (2 if len(given) == 1 else 1)
        return [pair] * rank if len(pair) == 2 else None  # type: ignore[list-item]
    if isinstance(given, tuple | list) and len(given) in (1, rank) and all(
            isinstance(p, tuple | list) and len(p) in (1, 2) and all(isinstance(v, int) for v in p) for p in given):
        pairs = [(p[0], p[-1]) for p in given]
        return pairs * rank if len(pairs) == 1 else pairs
    return None


@dataclass(frozen=True, slots=True)
class SplitSlices:
    """The slices of an index that meet split dims (see :func:`slice_split_dims`): ``slices``, each a
    lowering whose template wraps ``Ref(0)`` (the array so far) in ``mr.spatial_slice`` of one dim,
    applied in turn; the exchanges they run; and ``rest``, the index left to apply afterwards (those
    dims made full slices), None where nothing is left."""

    value: Array
    slices: tuple[Lowering, ...]
    emitted: tuple[Emitted, ...]
    rest: cst.Subscript | None


def slice_split_dims(ctx: RuleContext, node: cst.Subscript, base: Operand) -> SplitSlices | None:
    """``x[:, 1:-1]`` with a slice along a split dim: ``mr.spatial_slice`` of that dim (re-blocked, its
    neighbours' rows as needed), then the rest of the index as written; None where no slice meets a
    split dim.  The interpreter tries it before basic indexing, its bounds evaluated
    (:meth:`RuleContext.operand`)."""
    from meshify.rewrite.rules.lookups import _is_ellipsis, _is_none

    layout = array(base).layout
    elements = list(node.slice)
    explicit = sum(1 for e in elements if not _is_none(ctx, e) and not _is_ellipsis(e))
    pos, found = 0, []
    for n, element in enumerate(elements):
        if _is_none(ctx, element):
            continue
        if _is_ellipsis(element):
            pos += layout.rank - explicit
            continue
        s = element.slice
        if pos < layout.rank and layout.axes[pos] and (  # a slice, or an int index known when tracing
                (isinstance(s, cst.Slice) and not (s.lower is None and s.upper is None and s.step is None))
                or (isinstance(s, cst.Index) and _static_int(ctx, s.value))):
            found.append((n, pos, s))
        pos += 1
    if not found:
        return None
    slices: list[Lowering] = []
    emitted: list[Emitted] = []
    resized: dict[int, int] = {}
    dims, axes = list(layout.dims), list(layout.axes)
    dropped: set[int] = set()  # dims an int index drops (x[:, -1]); a one-entry slice keeps its dim (x[:, -1:])
    for n, dim, s in found:
        at = dim - sum(1 for d in dropped if d < dim)  # (the dim's place once the dims before it are dropped)
        entry = _one_entry(ctx, s)
        if entry is not None:  # x[:, -1], x[:, :1]: the global entry, gathered (an all-gather of one entry each)
            index, one = entry
            slab = tuple(BROADCAST if d == dim else x for d, x in enumerate(dims))
            emitted.append(Emitted("all_gather", axes[dim], Layout(slab, tuple(axes)), BROADCAST,
                                   f"all_gather over {axes_text(axes[dim])}: {ctx.code(node)!r} takes one entry "
                                   f"of split {dims[dim]!r}: each device's entry at that place in its block, "
                                   "gathered, the owner's kept"))
            slices.append(Lowering(Array(layout), (), "{mr}.spatial_entry({x}, {axis}, {index}, keep={keep}, "
                                   "axis_name={axes})", (("x", Ref(0)), ("axis", at), ("index", index),
                                                         ("keep", cst.Name(str(one))),
                                                         ("axes", MeshAxes(axes[dim])))))
            dims[dim], axes[dim] = BROADCAST, ()
            if not one:
                dropped.add(dim)
            continue
        bounds = [_bound(ctx, element) for element in (s.lower, s.upper, s.step)]
        if _none(ctx, s.lower) and bounds[0] == "static":  # x[:, None:None:-1]: as x[:, ::-1]
            bounds[0] = None
        if _none(ctx, s.upper) and bounds[1] == "static":
            bounds[1] = None
        if bounds[2] == -1 and bounds[1] is None and bounds[0] == -1:  # x[:, -1::-1]: from the last entry
            bounds[0] = None
        if bounds == [None, None, -1]:  # x[:, ::-1]: jnp.flip along that dim (each block from its mirror device)
            emitted.append(_record(ctx, layout, dim, None, ctx.code(node), "from the mirror device (then flipped "
                                   "locally): a slice with step -1", whole=True))
            spatial = [() if d in dropped else (axes[dim] if d == dim else ()) for d in range(layout.rank)]
            slices.append(Lowering(Array(layout), (), "{mr}.spatial_flip({x}, axis={axis}, spatial_axes={spatial})",
                                   (("x", Ref(0)), ("axis", at), ("spatial", cst.parse_expression(
                                       _axes_code([a for d, a in enumerate(spatial) if d not in dropped]))))))
            continue
        if bounds[2] is not None and not (type(bounds[2]) is int and bounds[2] != 0):
            raise ctx.error(UnsupportedError, s.step, f"a slice along split {layout.dims[dim]!r} "
                            f"({layout.describe()}) with step {ctx.code(s.step)}: meshify takes a nonzero int step it can "
                            "read when rewriting (x[:, ::2], x[:, 13:2:-1])",
                            "slice with a literal int step (x[:, ::2]; x[:, ::-1] reverses), or pool with a stride "
                            "(jax.lax.reduce_window), or map that dim to no mesh axis")
        for bound, given in zip(bounds[:2], (s.lower, s.upper)):
            if bound is ... and given is not None:
                raise ctx.error(UnsupportedError, given, f"a slice of split {layout.dims[dim]!r} with a bound that "
                                "is not an int", "write the bounds as ints (x[:, 1:-1]) or sizes from x.shape")
        padded = (n, dim, s) == found[-1] and _padded_subscript(ctx, node, at, layout.rank - len(dropped))
        emitted += _slice_records(ctx, elements[n], base, layout, dim, bounds[0], bounds[1], resized, bounds[2],
                                  padded)
        # another size than the dim's: named as a slice of a whole dim is (x[:, 4:8] beside sorted(x)[:, 4:8], both
        # vocab[4:8]?), never checked against the dim's own size
        dims[dim] = _sliced_dim(ctx, s, dims[dim])
        # the bounds as rewritten: x.shape[1] // 2 of a split dim reads the global size
        start = ctx.operand(s.lower).node if s.lower is not None else cst.Name("None")
        stop = ctx.operand(s.upper).node if s.upper is not None else cst.Name("None")
        if bounds[2] in (None, 1):
            slices.append(Lowering(Array(layout), (), "{mr}.spatial_slice({x}, {axis}, {start}, {stop}, "
                                   "axis_name={axes})", (("x", Ref(0)), ("axis", at), ("start", start),
                                                         ("stop", stop), ("axes", MeshAxes(layout.axes[dim])))))
            continue
        slices.append(Lowering(Array(layout), (), "{mr}.spatial_slice({x}, {axis}, {start}, {stop}, {step}, "
                               "axis_name={axes})", (("x", Ref(0)), ("axis", at), ("start", start), ("stop", stop),
                                                     ("step", ctx.operand(s.step).node),
                                                     ("axes", MeshAxes(layout.axes[dim])))))
    gone = {n for n, dim, _ in found if dim in dropped}
    rest = [e.with_changes(slice=cst.Slice(lower=None, upper=None)) if any(n == i for i, _, _ in found) else e
            for n, e in enumerate(elements) if n not in gone]
    whole = all(isinstance(e.slice, cst.Slice) and e.slice.lower is None and e.slice.upper is None
                and e.slice.step is None for e in rest)
    value = Array(Layout(tuple(d for i, d in enumerate(dims) if i not in dropped),
                         tuple(a for i, a in enumerate(axes) if i not in dropped), layout.partial), array(base).origin)
    return SplitSlices(value, tuple(slices), tuple(emitted), None if whole or not rest else node.with_changes(slice=rest))


def _static_int(ctx: RuleContext, node: cst.BaseExpression) -> bool:
    """An index that is one int known when tracing (a literal, ``cfg.n - 1``), not a sequence of them."""
    value = ctx.operand(node).value
    return isinstance(value, Static) and not isinstance(node, cst.List | cst.Tuple) and (
        not value.known or type(value.literal) is int)


def _one_entry(ctx: RuleContext, s: cst.Slice | cst.Index) -> tuple[cst.BaseExpression, bool] | None:
    """An index or slice leaving one entry of a dim: ``-1`` (the index as rewritten; the dim dropped), or a
    slice of literal bounds taking one entry of any dim it fits (``-1:``, ``:1``, ``3:4``; the dim kept)."""
    if isinstance(s, cst.Index):
        return ctx.operand(s.value).node, False
    bounds = [_bound(ctx, b) for b in (s.lower, s.upper, s.step)]
    if bounds[2] not in (None, 1) or not all(b is None or type(b) is int for b in bounds[:2]):
        return None
    lo, hi = bounds[0] or 0, bounds[1]
    if (lo == -1 and hi is None) or (hi is not None and hi == lo + 1 and (lo >= 0 or hi < 0)):
        return cst.Integer(str(lo)) if lo >= 0 else cst.UnaryOperation(cst.Minus(), cst.Integer(str(-lo))), True
    return None


def _none(ctx: RuleContext, element) -> bool:
    """Whether a slice bound is written ``None``."""
    if element is None:
        return False
    value = ctx.operand(element).value
    return isinstance(value, Static) and value.known and value.literal is None


def _bound(ctx: RuleContext, element) -> object:
    """A slice bound: None, its int, ``"static"`` for a static value not known now, or ``...``."""
    if element is None:
        return None
    value = ctx.operand(element).value
    if isinstance(value, Static):
        return value.literal if value.known and isinstance(value.literal, int) else "static"
    return ...


def _padded_subscript(ctx: RuleContext, node: cst.Subscript, dim: int, rank: int) -> bool:
    """Whether ``node`` (of ``rank`` dims) is the array ``jnp.pad`` pads with a constant along ``dim``
    (``jnp.pad(x[:, :-1], ((0, 0), (1, 0)))``): the pad's rule takes the slice in (:func:`_slice_padded`),
    so that only the padded rows need to split into equal blocks."""
    found = False

    class _Parent(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> bool:
            nonlocal found
            if not found and _argument(call, 0, "array") is node \
                    and "jax.numpy.pad" in ctx.qualified_names(call.func):
                found = _pads_with_a_constant(ctx, call, dim, rank)
            return not found

    ctx.function.visit(_Parent())
    return found


def _argument(call: cst.Call, position: int, name: str) -> cst.BaseExpression | None:
    """The node passed to a call's parameter ``name`` (at ``position`` when positional), as written."""
    keyword = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
    if keyword is not None:
        return keyword
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return positional[position] if position < len(positional) and len(positional) == sum(
        1 for a in call.args if a.keyword is None) else None


def _pads_with_a_constant(ctx: RuleContext, call: cst.Call, dim: int, rank: int) -> bool:
    """Whether ``jnp.pad`` as written pads with a constant, along ``dim`` where its widths are literals."""
    import ast

    mode = _argument(call, 2, "mode")
    if mode is not None and not (isinstance(mode, cst.SimpleString) and mode.evaluated_value == "constant"):
        return False
    given = _argument(call, 1, "pad_width")
    try:
        widths = _pad_widths(ast.literal_eval(ctx.code(given)), rank) if given is not None else None
    except (ValueError, SyntaxError, TypeError):
        widths = None
    return widths is None or any(widths[dim])


def _slice_records(ctx: RuleContext, where, base: Operand, layout: Layout, dim: int, lo, hi,
                   resized: dict, step=None, padded: bool = False) -> list[Emitted]:
    """The exchanges of ``x[lo:hi:step]`` along split ``dim``: the rows from the first one taken (the last,
    for a negative step) to the other end (plus ``|step| - 1``) re-blocked, then every ``|step|``-th row of
    each block taken locally, and a negative step's result flipped (each block from its mirror device);
    refused here when the sizes are known and the rows taken are none or cannot split evenly, unless
    ``padded`` (the slice is what ``jnp.pad`` pads along ``dim``: the pad's re-blocking takes it in)."""
    total = ctx.sizes.get(layout.dims[dim])
    if padded and step in (None, 1):
        return []  # (recorded by the pad, whose re-blocking takes the slice in)
    if total is None or lo == "static" or hi == "static":
        unknown = _reblock_records(ctx, where, None, base, layout, dim, None, None, "the slice")  # type: ignore[arg-type]
        return unknown + _reversal_records(ctx, base, layout, dim, step, {})
    taken, shards = range(*slice(lo, hi, step).indices(total)), ctx.mesh.size(layout.axes[dim])
    if not taken:  # (its blocks would be empty, and XLA's sharding pass fails on the derivative of a program holding one)
        raise ctx.error(UnsupportedError, where, f"the slice along split {layout.dims[dim]!r} (over "
                        f"{axes_text(layout.axes[dim])}) takes no rows: meshify refuses an empty slice of a split dim",
                        f"take at least {shards} rows, or map {layout.dims[dim]!r} to no mesh axis "
                        f"(rules={{{layout.dims[dim]!r}: None}})")
    if step in (None, 1):
        section = _section_records(ctx, base, layout, dim, total, taken[0], taken[-1] + 1)
        if section is not None:
            resized[dim] = len(taken) // shards
            return section
        return _reblock_records(ctx, where, None, base, layout, dim, taken[0], taken[-1] + 1,  # type: ignore[arg-type]
                                "the slice", resized)
    if len(taken) % shards:
        raise ctx.error(UnsupportedError, where, f"the slice along split {layout.dims[dim]!r} (over "
                        f"{axes_text(layout.axes[dim])}) takes {len(taken)} rows, which do not split into {shards} "
                        "equal blocks", f"take a multiple of {shards} rows, or map {layout.dims[dim]!r} to no mesh "
                        f"axis (rules={{{layout.dims[dim]!r}: None}})")
    first = min(taken[0], taken[-1])
    out = _reblock_records(ctx, where, None, base, layout, dim, first, first + len(taken) * abs(step),  # type: ignore[arg-type]
                           "the slice", resized)
    resized[dim] = len(taken) // shards
    return out + _reversal_records(ctx, base, layout, dim, step, resized)


def _section_records(ctx: RuleContext, base: Operand, layout: Layout, dim: int, total: int, start: int,
                     end: int) -> list[Emitted] | None:
    """The moves of slice ``[start:end]`` of split ``dim`` (``x[..., : d // 2]``) taken as a section of the dim,
    as ``jnp.split(x, [start, end])`` cuts it (``mr.spatial_slice`` does so where re-blocking would need rows
    from beyond the neighbouring device and both bounds are multiples of the shards): one ppermute per way its
    chunks move.  None where the slice re-blocks from the neighbours (or cannot be a section)."""
    axes = layout.axes[dim]
    shards = ctx.mesh.size(axes)
    if total % shards or start % shards or end % shards or \
            max(reblock_halos(total // shards, shards, start, end - start)) <= total // shards:
        return None
    widths = [w for w in (start, end - start, total - end) if w]
    _, sizes = section_chunks(widths, shards)
    moves = [len(rounds) for to, rounds in section_groups(sizes, shards).items() if any(t != j for j, t in enumerate(to))]
    record = Layout(layout.dims, layout.axes)
    return [Emitted(sections_kind(k, len(widths)), axes, record, layout.dims[dim],
                    f"sections over {axes_text(axes)}: the slice [{start}:{end}] of {ctx.code(base.original)!r} is a "
                    f"section of split {layout.dims[dim]!r}, its chunks sent to the devices holding its blocks "
                    f"(ppermute: {k} chunk{'s' * (k != 1)})") for k in moves]


def _reversal_records(ctx: RuleContext, base: Operand, layout: Layout, dim: int, step, resized: dict) -> list[Emitted]:
    """A negative step's flip of the rows taken: each block (its length along the dims ``resized``, this
    one's included, as re-blocked) from the mirror device; none for a positive step."""
    if step is None or step > 0:
        return []
    detail = "from the mirror device (then flipped locally): the rows a negative step takes, reversed"
    record = _record(ctx, layout, dim, None, ctx.code(base.original), detail, whole=True)
    if dim not in resized:
        return [record]
    return [replace(record, kind=halo_kind(math.prod(resized.values())), layout=_slab(layout, dim, resized=tuple(resized)))]


# -- concatenate along a split dim --------------------------------------------------------------------------


def concat_lowering(ctx: RuleContext, call: Call, seq: Operand, arrays: list[Operand], converts, axis: int,
                    along, value: Array) -> Lowering:
    """``jnp.concatenate([a, b], axis)`` along a dim split over ``along`` in every array (each converted to
    it): ``mr.spatial_concatenate``, recorded as one whole-block ppermute per array and distance where the
    sizes are known (``concat_shifts``)."""
    names = [f"a{i}" for i in range(len(arrays))]
    template = "{mr}.spatial_concatenate([" + ", ".join("{" + n + "}" for n in names) + "], {axis}"
    fill: list = [(n, Ref(i)) for i, n in enumerate(names)]
    fill.append(("axis", axis))
    dtype = call.params.get("dtype")
    if dtype is not None:
        template += ", dtype={dtype}"
        fill.append(("dtype", dtype.node))
    template += ", axis_name={axes}, dim={dim})"
    fill.append(("axes", MeshAxes(along)))
    fill.append(("dim", cst.SimpleString(repr(value.layout.dims[axis]))))
    shards = ctx.mesh.size(along)
    sizes = [ctx.sizes.get(array(a).layout.dims[axis]) for a in arrays]
    emitted: list[Emitted] = []
    if None in sizes or any(n % shards for n in sizes):  # type: ignore[operator]
        for a, c in zip(arrays, converts):
            emitted.append(_record(ctx, c.layout, axis, None, ctx.code(a.original), "the blocks of it the new "
                                   "block overlaps, from the devices holding them", whole=True))
    else:
        block, offset = sum(sizes) // shards, 0  # type: ignore[arg-type]
        for a, c, n in zip(arrays, converts, sizes):
            for d in concat_shifts(n // shards, shards, offset, block):  # type: ignore[operator]
                if d:
                    emitted.append(_record(ctx, c.layout, axis, None, ctx.code(a.original),
                                           f"its block from the device {abs(d)} {'after' if d > 0 else 'before'} "
                                           "(the joined dim cut into blocks again)", whole=True))
            offset += n  # type: ignore[operator]
    return Lowering(value, converts, template, tuple(fill), tuple(emitted))


# -- roll and flip -----------------------------------------------------------------------------------------------


def _axis_dims(ctx: RuleContext, call: Call, name: str, layout: Layout) -> list[int] | None:
    """The dims ``axis`` names (None: every dim, flattened for roll), refused where not a literal."""
    axis = _literal(call, name)
    if axis is ...:
        o = call.params[name]
        raise ctx.error(UnsupportedError, o.original, f"{_short(call)}({name}={ctx.code(o.original)}) is not a "
                        "literal", f"write {name}= as an int or a tuple of ints")
    if axis is None:
        return None
    return [a % layout.rank for a in ((axis,) if isinstance(axis, int) else axis)]


@op("jax.numpy.roll", reads=("a", "shift", "axis"))
def _roll(ctx: RuleContext, call: Call):
    x = _array(call, "a")
    if x is None:
        return unknown_call(ctx, call)
    layout = array(x).layout
    value = Array(layout, array(x).origin)
    dims = _axis_dims(ctx, call, "axis", layout)
    if dims is None:
        if layout.is_split:
            raise _split_error(ctx, call.node, call, layout, [d for d in range(layout.rank) if layout.axes[d]],
                               "roll without axis= rolls the flattened array", "name the axes: jnp.roll(x, s, axis=1)")
        return keep(value)
    split = [d for d in dims if layout.axes[d]]
    if not split:
        return keep(value)
    shift = _literal(call, "shift")
    if shift is ... and isinstance(call.params["shift"].value, Array):
        o = call.params["shift"]
        raise _split_error(ctx, o.original, call, layout, split, "the shift is an array",
                           "roll by a Python int (a static shift)")
    shifts = [None] * len(dims) if shift is ... else [shift] * len(dims) if isinstance(shift, int) else list(shift)
    emitted = []
    for d, s in zip(dims, shifts):
        if layout.axes[d]:
            emitted += _roll_records(ctx, x, layout, d, s)
    template, fill = _template(call, "spatial_roll", "a", ("shift", "axis"), "spatial_axes")
    return Lowering(value, (Convert(x, layout, "jnp.roll"),), template, (*fill, _spatial_fill(layout)),
                    tuple(emitted))


def _roll_records(ctx: RuleContext, x: Operand, layout: Layout, dim: int, shift: int | None) -> list[Emitted]:
    total, shards = ctx.sizes.get(layout.dims[dim]), ctx.mesh.size(layout.axes[dim])
    name = ctx.code(x.original)
    if total is None or shift is None:
        return [_record(ctx, layout, dim, None, name, "the rows that wrap round from the previous blocks")]
    rows = total // shards
    q, t = divmod(shift % total, rows)
    out = []
    if q % shards:
        out.append(_record(ctx, layout, dim, None, name, f"from the device {q} block{'s' * (q != 1)} before, "
                           "wrapping round (periodic)", whole=True))
    if t:
        out.append(_record(ctx, layout, dim, t, name, f"the last of the device {q + 1} block{'s' * (q + 1 != 1)} "
                           "before, wrapping round (periodic)"))
    return out


@op("jax.numpy.flip", reads=("m", "axis"))
def _flip(ctx: RuleContext, call: Call):
    x = _array(call, "m")
    if x is None:
        return unknown_call(ctx, call)
    layout = array(x).layout
    value = Array(layout, array(x).origin)
    dims = _axis_dims(ctx, call, "axis", layout)
    split = [d for d in (range(layout.rank) if dims is None else dims) if layout.axes[d]]
    if not split:
        return keep(value)
    template, fill = _template(call, "spatial_flip", "m", ("axis",), "spatial_axes")
    return _flip_lowering(ctx, x, layout, split, template, fill, "jnp.flip")


def _flip_lowering(ctx: RuleContext, x: Operand, layout: Layout, split: list[int], template: str, fill: tuple,
                   purpose: str) -> Lowering:
    """``mr.spatial_flip`` of ``x``: each split dim flipped its block from the mirror device (one ppermute each)."""
    name = ctx.code(x.original)
    emitted = tuple(_record(ctx, layout, d, None, name, "from the mirror device (then flipped locally)", whole=True)
                    for d in split)
    return Lowering(Array(layout, array(x).origin), (Convert(x, layout, purpose),), template,
                    (*fill, _spatial_fill(layout)), emitted)


@op("jax.numpy.fliplr", kind=1)
@op("jax.numpy.flipud", kind=0)
def _flip_one(ctx: RuleContext, call: Call, kind: int):
    """``jnp.fliplr`` (``jnp.flipud``): ``jnp.flip`` along dim 1 (0), as :func:`_flip` lowers it."""
    x = _array(call, "m")
    if x is None or array(x).layout.rank <= kind:  # (JAX's own error for too few dims)
        return unknown_call(ctx, call)
    layout = array(x).layout
    if not layout.axes[kind]:
        return keep(Array(layout, array(x).origin))
    template = f"{{mr}}.spatial_flip({{m}}, axis={kind}, spatial_axes={{spatial_axes}})"
    return _flip_lowering(ctx, x, layout, [kind], template, (("m", Ref(0)),), f"jnp.{_short(call)}")


# -- upsampling ----------------------------------------------------------------------------------------------


_LINEAR = ("linear", "bilinear", "trilinear", "triangle")


@op("jax.image.resize", reads=("image", "shape", "method", "antialias", "precision"))
def _resize(ctx: RuleContext, call: Call):
    subject = _subject(call, "image")
    if subject is None:
        return unknown_call(ctx, call)
    x, layout, value, split = subject
    if not split:
        return Lowering(value, (_whole(x, "jax.image.resize"),))
    method = _literal(call, "method")
    if method is ... or not isinstance(method, str) or method not in ("nearest", *_LINEAR):
        o = call.params["method"]
        raise _split_error(ctx, o.original, call, layout, split, f"method={ctx.code(o.original)}: meshify resizes "
                           "a split dim with 'nearest' or linear upsampling by an integer factor",
                           "write method='nearest' or 'bilinear' (a literal), or map those dims to no mesh axis")
    emitted: list[Emitted] = []
    shape = _literal(call, "shape")
    same = isinstance(shape, tuple) and shape == tuple(ctx.sizes.get(d, -1) for d in layout.dims)
    if method in _LINEAR and not same:  # (to its own shape: jax.image.resize returns the image; XLA drops the halos)
        name = ctx.code(x.original)
        for d in split:
            for side, source in (("before", "previous"), ("after", "next")):
                emitted.append(_record(ctx, layout, d, 1, name, f"{side} its block, from the {source} device (its own "
                                       "edge row at the image border) for linear upsampling"))
    template, fill = _template(call, "spatial_resize", "image", ("shape", "method", "antialias", "precision"),
                               "spatial_axes")
    return Lowering(value, (_whole(x, "jax.image.resize"),), template, (*fill, _spatial_fill(layout)),
                    tuple(emitted))
