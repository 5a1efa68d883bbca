"""Rules for ``jax.lax``'s dynamic slices: a cache written at a traced position
(``dynamic_update_slice``, ``dynamic_update_slice_in_dim``, ``dynamic_update_index_in_dim``) and read
back (``dynamic_slice``, ``dynamic_slice_in_dim``, ``dynamic_index_in_dim``).

Each device runs the call on its own block: the position must fall in an unsplit dim (a split dim
is written or read whole, from 0), and the update is converted to the operand's splits first.  An
update of a partial sum completes it first (writing into each device's part would repeat the
update in the sum); a read keeps it (a slice is linear).  One entry of a split dim
(``dynamic_index_in_dim``, ``dynamic_update_index_in_dim``) is read or written by the device whose
block holds it (``mr.dynamic_index_in_dim``: a partial sum, zeros elsewhere).
"""

from __future__ import annotations

import dataclasses

import libcst as cst

from meshify.annotate._types import BROADCAST, INFERRED, Layout, unify_dims, unsliced
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._collectives import axes_text
from meshify.rewrite._values import Array, Opaque, Operand, Static, array
from meshify.rewrite.rules._api import (
    At,
    Call,
    Convert,
    Lowering,
    MeshAxes,
    Ref,
    RuleContext,
    keep,
    literal_items,
    op,
    unknown_call,
)
from meshify.rewrite.rules.shapes import _shard_size

__all__: list[str] = []


def _axis(ctx: RuleContext, call: Call, operand: Operand | None, rank: int) -> int:
    value = operand.value if operand is not None else Static.of(0)
    if not (isinstance(value, Static) and value.known and type(value.literal) is int and -rank <= value.literal < rank):
        raise ctx.error(UnsupportedError, call.node, f"{call.short} needs a literal int axis below {rank}",
                        "write the axis as an int literal so that meshify knows which dim it moves along")
    return value.literal % rank


def _unsplit_at(ctx: RuleContext, call: Call, x: Operand, axis: int) -> None:
    layout = array(x).layout
    if layout.axes[axis]:
        raise ctx.error(UnsupportedError, call.node,
                        f"{call.short} along split dim {layout.dims[axis]!r} of {ctx.code(x.original)!r} "
                        f"(layout {layout.describe()})",
                        f"map {layout.dims[axis]!r} to no mesh axis, or move along an unsplit dim")


def _update(ctx: RuleContext, call: Call, x: Operand, update: Operand | None, free: set[int],
            windowed: frozenset[int] = frozenset()) -> Lowering:
    """The operand (completed if partial) updated by ``update`` converted to its splits; ``free``: the
    positions the call may write at any offset (the others it writes whole); ``windowed``: split dims among
    them that the runtime writes in part (the update whole along them)."""
    layout = array(x).layout
    converts = []
    if layout.partial:
        converts.append(Convert(x, layout.with_partial(()), f"{call.short} (an update needs it whole)"))
    if update is None or isinstance(update.value, Static):
        return Lowering(Array(layout.with_partial(()), array(x).origin), converts=tuple(converts))
    if isinstance(update.value, Opaque):
        if layout.is_split:
            raise ctx.error(UnsupportedError, update.original, f"{ctx.code(update.original)!r} is an array whose dims "
                            f"meshify cannot infer, written into {ctx.code(x.original)!r} of layout "
                            f"{layout.describe()}", f"name its dims where it is made: u: Tensor[...] = "
                            f"{ctx.code(update.original)}")
        return Lowering(Array(layout.with_partial(()), array(x).origin), converts=tuple(converts))
    u = array(update).layout
    if u.rank != layout.rank:
        raise ctx.error(LayoutError, update.original, f"{call.short}'s update {ctx.code(update.original)!r} has "
                        f"{u.rank} dims, the operand {layout.rank}", "give the update the operand's rank (JAX's rule)")
    named = tuple(dim if unify_dims(d, dim) == dim and d.endswith(INFERRED) else d
                  for d, dim in zip(u.dims, layout.dims))
    for i, (dim, axes) in enumerate(zip(layout.dims, layout.axes)):
        if axes and i not in windowed and (i in free or named[i] != dim):
            raise ctx.error(UnsupportedError, call.node,
                            f"{call.short} writes part of split dim {dim!r} of {ctx.code(x.original)!r} "
                            f"(layout {layout.describe()}): the update's dim there is {u.dims[i]!r}",
                            f"write whole split dims (start 0, the update's dim named {dim!r}), or map {dim!r} "
                            "to no mesh axis")
    target = Layout(u.dims, tuple(a if not free or i not in free else () for i, a in enumerate(layout.axes)))
    convert = Convert(update, target, f"the update {call.short} writes")
    if named != u.dims:  # a dim meshify named itself (a reshape's KV?) written whole into a split dim: the sizes
        from meshify.rewrite.rules.elementwise import _checked_entries  # are checked when traced

        convert = _checked_entries(ctx, convert, named)
    converts.append(convert)
    return Lowering(Array(layout.with_partial(()), array(x).origin), converts=tuple(converts))


@op("jax.lax.dynamic_update_slice", reads=("operand", "update", "start_indices"))
def _dynamic_update_slice(ctx: RuleContext, call: Call):
    """``dynamic_update_slice(cache, new, (0, pos, 0, 0))``: split dims written whole (start 0)."""
    x, update = call.arg(0, "operand"), call.arg(1, "update")
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = array(x).layout
    starts = literal_items(call.arg(2, "start_indices"))
    if starts is None or len(starts) != layout.rank:
        if layout.is_split:
            raise ctx.error(UnsupportedError, call.node, f"{call.short}'s start indices are not a literal tuple of "
                            f"{layout.rank} entries", "write them out: (0, pos, 0)")
        return _marked(_update(ctx, call, x, update, set(range(layout.rank))), call, (2, "start_indices"))
    free = {i for i, s in enumerate(starts) if not (isinstance(s.value, Static) and s.value.literal == 0)}
    return _marked(_update(ctx, call, x, update, free), call, (2, "start_indices"))


@op("jax.lax.dynamic_update_slice_in_dim", reads=("operand", "update", "start_index", "axis"))
def _dynamic_update_slice_in_dim(ctx: RuleContext, call: Call):
    """``dynamic_update_slice_in_dim(cache, new, pos, axis=1)``: along an unsplit dim."""
    x, update = call.arg(0, "operand"), call.arg(1, "update")
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = array(x).layout
    axis = _axis(ctx, call, call.arg(3, "axis"), layout.rank)
    split = layout.axes[axis]
    if not split:
        return _marked(_update(ctx, call, x, update, {axis}), call, (2, "start_index"))
    if update is None or not isinstance(update.value, Array):
        raise ctx.error(UnsupportedError, call.node, f"{call.short} along split dim {layout.dims[axis]!r} of "
                        f"{ctx.code(x.original)!r} (layout {layout.describe()}) with an update whose dims meshify "
                        "cannot infer", f"name the update's dims where it is made: u: Tensor[...] = "
                        f"{ctx.code(update.original) if update is not None else '...'}")
    # the update whole along the dim: each device writes the rows of it that fall in its block
    written = _update(ctx, call, x, update, {axis}, frozenset({axis}))
    converts = list(written.converts)
    if len(converts) == 1:  # (the operand needed no completing: converted as it is, for {x})
        converts.insert(0, Convert(x, layout, call.short))
    converts, index = _index_fill(ctx, call, call.arg(2, "start_index"), converts)
    template = "{mr}.dynamic_update_slice_in_dim({x}, {u}, {i}, {axis}, axis_name={axes})"
    fill = (("x", Ref(0)), ("u", Ref(1)), ("i", index), ("axis", axis), ("axes", MeshAxes(split)))
    note = (f"rows of split '{layout.dims[axis]}' of {ctx.code(x.original)} written by the devices whose blocks "
            "hold them")
    return _marked(Lowering(written.result, tuple(converts), template, fill, notes=(note,)), call, (2, "start_index"))


@op("jax.lax.dynamic_slice_in_dim", reads=("operand", "start_index", "slice_size", "axis", "allow_negative_indices"))
def _dynamic_slice_in_dim(ctx: RuleContext, call: Call):
    """``dynamic_slice_in_dim(cache, pos, n, axis=1)``: a read along an unsplit dim, splits and partial
    sums kept.  The read dim is named by its size: the dim ``n`` is the size of (``L = x.shape[1]``: a rotary
    table cut to the sequence), a literal's (``4?``; 1: a size-1 dim), else an inferred name after the dim's."""
    x = call.arg(0, "operand")
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = array(x).layout
    axis = _axis(ctx, call, call.arg(3, "axis"), layout.rank)
    read = _read_dim(layout.dims[axis], call.arg(2, "slice_size"))
    dims = tuple(read if i == axis else d for i, d in enumerate(layout.dims))
    if layout.axes[axis]:
        return _window_of_split_dim(ctx, call, x, axis, dims)
    return _clamping(_marked(keep(Array(Layout(dims, layout.axes, layout.partial), x.value.origin)), call,
                             (1, "start_index")), call, "dynamic_slice_in_dim", [call.arg(1, "start_index")])


def _window_of_split_dim(ctx: RuleContext, call: Call, x: Operand, axis: int, dims: tuple[str, ...]) -> Lowering:
    """``dynamic_slice_in_dim(x, i, n, axis)`` along a split dim: each device reads the rows of the window (its
    start clamped in the whole dim) that its block holds, zeros for the others, so the window, whole, is a
    partial sum over the dim's axes (completed where used: a psum, or a psum_scatter where it is wanted split):
    only the window's rows move."""
    layout = array(x).layout
    split = layout.axes[axis]
    size = call.arg(2, "slice_size")
    if size is None:
        raise ctx.error(UnsupportedError, call.node, f"{call.short} needs a slice size", "pass the slice size")
    value = Array(Layout(dims, tuple(() if i == axis else a for i, a in enumerate(layout.axes)),
                         layout.partial | frozenset(split)), f"a window of split '{layout.dims[axis]}'")
    allow = _literal_bool(ctx, call, call.arg(4, "allow_negative_indices"), True, "allow_negative_indices")
    converts, index = _index_fill(ctx, call, call.arg(1, "start_index"), [Convert(x, layout, call.short)])
    template = ("{mr}.dynamic_slice_in_dim({x}, {i}, {n}, {axis}, axis_name={axes}, "
                "allow_negative_indices={neg})")
    fill = (("x", Ref(0)), ("i", index), ("n", size.node), ("axis", axis), ("axes", MeshAxes(split)),
            ("neg", allow))
    note = (f"window of split '{layout.dims[axis]}' of {ctx.code(x.original)}: each device reads the rows its "
            f"block holds (zeros elsewhere); the result is a partial sum over {axes_text(split)}")
    return _marked(Lowering(value, tuple(converts), template, fill, notes=(note,)), call, (1, "start_index"))


def _clamping(lowering: Lowering, call: Call, runtime: str, starts: list[Operand | None] | None) -> Lowering:
    """``lowering`` calling ``mr.<runtime>`` (the starts clamped before the read, as JAX clamps them) unless
    every start is a literal 0: a split of the result along a dim it reads is a slice of this slice, which
    XLA folds into one clamped to the outer slice's bounds, dropping the clamping of the user's start."""
    if starts is not None and all(isinstance(s.value, Static) and s.value.literal == 0 for s in starts if s):
        return lowering
    return dataclasses.replace(lowering, callee=runtime)


def _read_dim(dim: str, size: Operand | None) -> str:
    """The name of ``dim`` read ``size`` entries long by a dynamic slice: the dim ``size`` is the size of
    (``x.shape[1]``), a literal's (``4?``; 1: a size-1 dim), else an inferred name after the dim's."""
    count = size.value if size is not None and isinstance(size.value, Static) else None
    if count is not None and count.size_of is not None:
        return count.size_of
    if count is not None and count.known and type(count.literal) is int:
        return BROADCAST if count.literal == 1 else f"{count.literal}{INFERRED}"
    return dim if dim == BROADCAST else unsliced(dim) + INFERRED


def _marked(lowering: Lowering, call: Call, *names: tuple[int, str]) -> Lowering:
    """``lowering`` with the positions the call reads (see :func:`_positions`) as its indices."""
    return dataclasses.replace(lowering, indices=(*lowering.indices, *_positions(call, *names)))


def _positions(call: Call, *names: tuple[int, str]) -> tuple[Operand, ...]:
    """The operands a call reads as positions (start indices, an index), for ``Lowering.indices``: an
    argument named there holds integers (``meshify verify`` draws them so)."""
    out: list[Operand] = []
    for position, name in names:
        operand = call.arg(position, name)
        if operand is None:
            continue
        items = literal_items(operand)
        out.extend(items if items is not None else [operand])
    return tuple(o for o in out if not isinstance(o.value, Static) or not o.value.known)


def _items(call: Call, seq: Operand | None) -> list[Operand] | None:
    """The items of a literal tuple argument as the interpreter evaluated each (``B`` of ``(B, 3, H)``
    its own value: a dim's size), else None."""
    items = literal_items(seq)
    if items is None:
        return None
    return [call.items.get(o.original, o) for o in items]


def _array_items(ctx: RuleContext, seq: Operand | None) -> list[Operand] | None:
    """The items of starts written ``jnp.array([pos, 0])`` (a literal list in ``jnp.array`` / ``jnp.asarray``), each
    a literal int known, the others unknown (a whole vector's entries), else None."""
    node = seq.original if seq is not None else None
    if not (isinstance(node, cst.Call) and node.args and isinstance(node.args[0].value, cst.List | cst.Tuple)
            and ctx.qualified_names(node.func) & {"jax.numpy.array", "jax.numpy.asarray"}):
        return None
    out = []
    for element in node.args[0].value.elements:
        if isinstance(element, cst.StarredElement):
            return None
        value = element.value
        known = isinstance(value, cst.Integer)
        out.append(Operand(Static.of(int(value.evaluated_value)) if known else Static(), value, value))
    return out


@op("jax.lax.dynamic_slice", reads=("operand", "start_indices", "slice_sizes", "allow_negative_indices"))
def _dynamic_slice(ctx: RuleContext, call: Call):
    """``dynamic_slice(cache, (0, pos, 0), (B, n, D))``: a read at traced positions of unsplit dims; a
    split dim is read whole (start 0, its size written as the dim's, ``x.shape[0]`` or a name bound to
    it), its size replaced by the block's.  Splits and partial sums kept (a slice is linear; the dims
    read keep their names)."""
    x = call.arg(0, "operand")
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = array(x).layout
    if not layout.is_split:
        # each dim read named by its size (table[offset:offset + L] of a rotary table: the sequence's), as
        # dynamic_slice_in_dim's
        read = _items(call, call.arg(2, "slice_sizes"))
        if read is not None and len(read) == layout.rank:
            dims = tuple(_read_dim(d, size) for d, size in zip(layout.dims, read))
            return _clamping(_marked(keep(Array(Layout(dims, layout.axes, layout.partial), x.value.origin)), call,
                                     (1, "start_indices")), call, "dynamic_slice", _items(call, call.arg(1, "start_indices")))
        return _clamping(_marked(keep(x.value), call, (1, "start_indices")), call, "dynamic_slice",
                         _items(call, call.arg(1, "start_indices")))
    starts, sizes_arg = call.arg(1, "start_indices"), call.arg(2, "slice_sizes")
    starts_items, sizes = _items(call, starts) or _array_items(ctx, starts), _items(call, sizes_arg)
    if starts_items is None or sizes is None or len(starts_items) != layout.rank or len(sizes) != layout.rank:
        raise ctx.error(UnsupportedError, call.node, f"{call.short} of {ctx.code(x.original)!r} (layout "
                        f"{layout.describe()}) with start indices or sizes that are not literal tuples of "
                        f"{layout.rank} entries", "write both out: (0, pos, 0) and (x.shape[0], n, d)")
    assert sizes_arg is not None
    replace = []
    windows: list[int] = []  # split dims read in part: a window of each, a partial sum over its axes
    for i, (dim, axes, start, size) in enumerate(zip(layout.dims, layout.axes, starts_items, sizes)):
        if not axes:
            continue
        whole = isinstance(size.value, Static) and size.value.size_of == dim
        if not (isinstance(start.value, Static) and start.value.literal == 0 and whole):
            windows.append(i)
            continue
        shard = _shard_size(ctx, size, size.original, ctx.mesh.size(axes), dim)
        if shard is not None:
            replace.append((At(call.position(sizes_arg), i), shard))
    if windows:
        return _windows_of_split_dims(ctx, call, x, windows, sizes, {at.item: v for at, v in replace})
    return _clamping(_marked(Lowering(x.value, replace=tuple(replace)), call, (1, "start_indices")), call,
                     "dynamic_slice", starts_items)


def _windows_of_split_dims(ctx: RuleContext, call: Call, x: Operand, windows: list[int], sizes: list[Operand],
                           shard_sizes: dict) -> Lowering:
    """``dynamic_slice`` reading part of split dims (``windows``): each device reads the rows of each window
    (its start clamped in the whole dim) that its block holds, zeros for the others, as
    :func:`_window_of_split_dim`; the result is a partial sum over those dims' axes, the windows whole.  Split
    dims read whole stay split (their size the block's); the others are read as JAX reads them."""
    layout = array(x).layout
    split = frozenset(a for i in windows for a in layout.axes[i])
    dims = tuple(_read_dim(d, size) if i in windows else d for i, (d, size) in enumerate(zip(layout.dims, sizes)))
    value = Array(Layout(dims, tuple(() if i in windows else a for i, a in enumerate(layout.axes)),
                         layout.partial | split), "windows of split " + ", ".join(repr(layout.dims[i]) for i in windows))
    starts = call.arg(1, "start_indices")
    allow = call.arg(3, "allow_negative_indices")
    assert starts is not None
    names = [MeshAxes(layout.axes[i]) if i in windows else None for i in range(layout.rank)]
    template = ("{mr}.dynamic_slice({x}, {starts}, {sizes}, allow_negative_indices={neg}, axis_names=("
                + ", ".join(f"{{n{i}}}" for i in range(layout.rank)) + "," * (layout.rank == 1) + "))")
    fill = (("x", Ref(0)), ("starts", starts.node),
            ("sizes", tuple(shard_sizes.get(i, size.node) for i, size in enumerate(sizes))),
            ("neg", allow.node if allow is not None else cst.Name("True")),
            *((f"n{i}", n if n is not None else cst.Name("None")) for i, n in enumerate(names)))
    note = (f"windows of split {', '.join(repr(layout.dims[i]) for i in windows)} of {ctx.code(x.original)}: each "
            f"device reads the rows its block holds (zeros elsewhere); the result is a partial sum over "
            f"{axes_text(tuple(sorted(split, key=ctx.mesh.names.index)))}")
    return _marked(Lowering(value, (Convert(x, layout, call.short),), template, fill, notes=(note,)), call,
                   (1, "start_indices"))


@op("jax.lax.dynamic_index_in_dim", reads=("operand", "index", "axis", "keepdims", "allow_negative_indices"))
def _dynamic_index_in_dim(ctx: RuleContext, call: Call):
    """``dynamic_index_in_dim(cache, pos, axis=1, keepdims=False)``: one position of a dim.  Along an unsplit
    dim each device reads its block; along a split one the device holding the (clamped) position reads it and
    the others give zeros: a partial sum over the dim's axes (``mr.dynamic_index_in_dim``)."""
    x = call.arg(0, "operand")
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = array(x).layout
    axis = _axis(ctx, call, call.arg(2, "axis"), layout.rank)
    keepdims = call.arg(3, "keepdims")
    keep_dim = _literal_bool(ctx, call, keepdims, True, "keepdims")
    dims, axes = list(layout.dims), list(layout.axes)
    split = layout.axes[axis]
    if keep_dim:
        dims[axis], axes[axis] = BROADCAST, ()
    else:
        del dims[axis], axes[axis]
    if not split:
        return _marked(keep(Array(Layout(tuple(dims), tuple(axes), layout.partial), array(x).origin)), call,
                       (1, "index"))
    allow = _literal_bool(ctx, call, call.arg(4, "allow_negative_indices"), True, "allow_negative_indices")
    value = Array(Layout(tuple(dims), tuple(axes), layout.partial | frozenset(split)),
                  f"one entry of split '{layout.dims[axis]}'")
    converts, index = _index_fill(ctx, call, call.arg(1, "index"), [Convert(x, layout, call.short)])
    template = "{mr}.dynamic_index_in_dim({x}, {i}, {axis}, {keep}, axis_name={axes}, allow_negative_indices={neg})"
    fill = (("x", Ref(0)), ("i", index), ("axis", axis), ("keep", keep_dim), ("axes", MeshAxes(split)),
            ("neg", allow))
    note = (f"entry of split '{layout.dims[axis]}' of {ctx.code(x.original)} read on the device holding it; the "
            f"result is a partial sum over {axes_text(split)}")
    return _marked(Lowering(value, tuple(converts), template, fill, notes=(note,)), call, (1, "index"))


@op("jax.lax.dynamic_update_index_in_dim", reads=("operand", "update", "index", "axis", "allow_negative_indices"))
def _dynamic_update_index_in_dim(ctx: RuleContext, call: Call):
    """``dynamic_update_index_in_dim(cache, new, pos, axis=1)``: one position of a dim written, the update of the
    operand's rank (1 along ``axis``) or of one dim less.  Along an unsplit dim each device writes its block;
    along a split one the device whose block holds the (clamped) position writes it
    (``mr.dynamic_update_index_in_dim``), the others keep theirs."""
    x, update = call.arg(0, "operand"), call.arg(1, "update")
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = array(x).layout
    axis = _axis(ctx, call, call.arg(3, "axis"), layout.rank)
    u = array(update).layout if update is not None and isinstance(update.value, Array) else None
    if u is not None and u.rank in (layout.rank - 1, layout.rank):
        # the update without the written dim (JAX inserts it where the update has one dim less), converted to
        # the operand's other splits
        same = u.rank == layout.rank
        theirs = [d for i, d in enumerate(u.dims) if not same or i != axis]
        others = [(d, ax) for i, (d, ax) in enumerate(zip(layout.dims, layout.axes)) if i != axis]
        for dim, (want, axes) in zip(theirs, others):
            if axes and dim != want and not (dim.endswith(INFERRED) and unify_dims(dim, want) == want):
                raise ctx.error(UnsupportedError, call.node,
                                f"{call.short} writes {ctx.code(update.original)!r} of dims {list(u.dims)} into "
                                f"{ctx.code(x.original)!r} (layout {layout.describe()}), whose split dim there is "
                                f"{want!r}", f"name the update's dims as the operand's, or map {want!r} to no mesh "
                                "axis")
        target = [ax for _, ax in others]
        if same:
            target.insert(axis, ())
        converts = [Convert(x, layout.with_partial(()), f"{call.short} (an update needs it whole)"),
                    Convert(update, Layout(u.dims, tuple(target)), f"the update {call.short} writes")]
        written = Lowering(Array(layout.with_partial(()), array(x).origin), converts=tuple(converts))
    else:
        written = _update(ctx, call, x, update, {axis})
    split = layout.axes[axis]
    if not split:
        return _marked(written, call, (2, "index"))
    fills: tuple = ("u", Ref(1))
    if u is None and update is not None and isinstance(update.value, Static):  # a number written
        written, fills = Lowering(written.result, (written.converts or (Convert(x, layout, call.short),))[:1]), \
            ("u", update.node)
    elif u is None or len(written.converts) != 2:
        raise ctx.error(UnsupportedError, call.node, f"{call.short} along split dim {layout.dims[axis]!r} of "
                        f"{ctx.code(x.original)!r} (layout {layout.describe()}) with an update whose dims meshify "
                        "cannot infer", f"name the update's dims where it is made: u: Tensor[...] = "
                        f"{ctx.code(update.original) if update is not None else '...'}")
    allow = _literal_bool(ctx, call, call.arg(4, "allow_negative_indices"), True, "allow_negative_indices")
    converts, index = _index_fill(ctx, call, call.arg(2, "index"), list(written.converts))
    template = ("{mr}.dynamic_update_index_in_dim({x}, {u}, {i}, {axis}, axis_name={axes}, "
                "allow_negative_indices={neg})")
    fill = (("x", Ref(0)), fills, ("i", index), ("axis", axis), ("axes", MeshAxes(split)), ("neg", allow))
    note = f"entry of split '{layout.dims[axis]}' of {ctx.code(x.original)} written on the device holding it"
    return _marked(Lowering(written.result, tuple(converts), template, fill, notes=(note,)), call, (2, "index"))


def _literal_bool(ctx: RuleContext, call: Call, operand: Operand | None, default: bool, name: str) -> bool:
    if operand is None:
        return default
    if isinstance(operand.value, Static) and operand.value.known and isinstance(operand.value.literal, bool):
        return operand.value.literal
    raise ctx.error(UnsupportedError, operand.original, f"{call.short} with a {name} meshify cannot read "
                    f"({ctx.code(operand.original)})", f"write {name}=True or {name}=False")


def _index_fill(ctx: RuleContext, call: Call, index: Operand | None, converts: list[Convert]
                ) -> tuple[list[Convert], object]:
    """The converts with the index's (whole: every device compares it with its block) and what fills ``{i}``."""
    if index is None:
        raise ctx.error(UnsupportedError, call.node, f"{call.short} needs an index", "pass the index")
    if isinstance(index.value, Array):
        i = array(index).layout
        if i.rank:
            raise ctx.error(LayoutError, index.original, f"{call.short}'s index {ctx.code(index.original)!r} has dims "
                            f"{list(i.dims)}", "index with a scalar (one position)")
        return [*converts, Convert(index, i.with_partial(()), f"the index of {call.short}")], Ref(len(converts))
    return converts, index.node
