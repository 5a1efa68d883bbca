"""Shape, indexing and lookup ops: the Transformer's plumbing.

- transpose family (``.T``, ``transpose``, ``swapaxes``, ``moveaxis``): local, linear;
- ``reshape`` named by an annotated assignment: sizes in the call become per-shard
  sizes; a split dim must be the major part of a merge;
- ``concatenate``/``stack`` on unsplit dims;
- arrays built from dim sizes (``zeros``, ``ones``, ``full``, ``arange``, ``*_like``)
  and masks (``tril``, ``triu``): built whole, so positions are global, then sliced;
- basic indexing (``None``, ``...``, ``:``, ints and slices on unsplit dims);
- lookups on a split table (``emb[ids]``, ``jnp.take``, ``take_along_axis``) as a
  masked local lookup plus a deferred psum; ``one_hot`` with a split depth.
"""

from __future__ import annotations

import math

import libcst as cst

from meshify.annotate._types import BROADCAST, Axes, Layout
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._ops import ADD, NONLINEAR, Call, _kept_partial, _unknown_call, elementwise, op
from meshify.rewrite._plan import choose_splits
from meshify.rewrite._templates import axes_node, call_template, int_node
from meshify.rewrite._values import Array, Opaque, Operand, Static, StructValue, TupleValue

__all__ = ["reshape_named", "index_array", "is_reshape", "lookup"]


def _literal(operand) -> object:
    if operand is None:
        return None
    value = operand.value
    return value.literal if isinstance(value, Static) and value.known else _UNKNOWN


_UNKNOWN = object()


def _ints(rw, operands, what: str, where) -> list[int]:
    out = []
    for o in operands:
        lit = _literal(o)
        if isinstance(lit, tuple | list):
            out.extend(lit)
        elif isinstance(lit, int):
            out.append(lit)
        else:
            raise rw.error(UnsupportedError, where, f"{what} needs literal int axes",
                           "write the axes as int literals so that meshify knows which dims move")
    return out


def _permuted(x: Operand, perm: list[int]) -> Array:
    layout = x.value.layout
    return Array(Layout(tuple(layout.dims[p] for p in perm), tuple(layout.axes[p] for p in perm), layout.partial),
                 x.value.origin)


def _x(call: Call, keyword: str = "a"):
    return call.receiver if call.receiver is not None else call.arg(0, keyword)


def _rebuilt(rw, call: Call, x_node) -> cst.BaseExpression:
    return call.rebuild(rw, {"receiver": x_node} if call.receiver is not None else {0: x_node})


# -- transpose family ------------------------------------------------------------------------


@op("jax.numpy.transpose", method="transpose", reads=("a", "axes", "args"))
def _transpose(rw, call: Call):
    x = _x(call)
    if not isinstance(x.value, Array):
        return _unknown_call(rw, call)
    rank = x.value.layout.rank
    if call.receiver is not None:
        given = list(call.args) or ([call.kwargs["axes"]] if "axes" in call.kwargs else [])
    else:
        given = [o for o in [call.arg(1, "axes")] if o is not None]
    given = [o for o in given if _literal(o) is not None]
    perm = _ints(rw, given, "transpose", call.node) if given else list(reversed(range(rank)))
    if sorted(p % rank for p in perm) != list(range(rank)):
        raise rw.error(LayoutError, call.node, f"transpose axes {perm} are not a permutation of {rank} dims",
                       f"list each of the {rank} axes once")
    return _permuted(x, [p % rank for p in perm]), call.rebuild(rw, {})


@op("jax.numpy.swapaxes", method="swapaxes")
def _swapaxes(rw, call: Call):
    x = _x(call)
    if not isinstance(x.value, Array):
        return _unknown_call(rw, call)
    offset = 0 if call.receiver is not None else 1
    a, b = _ints(rw, [call.arg(offset, "axis1"), call.arg(offset + 1, "axis2")], "swapaxes", call.node)
    rank = x.value.layout.rank
    perm = list(range(rank))
    perm[a % rank], perm[b % rank] = perm[b % rank], perm[a % rank]
    return _permuted(x, perm), call.rebuild(rw, {})


@op("jax.numpy.moveaxis")
def _moveaxis(rw, call: Call):
    x = call.arg(0, "a")
    if not isinstance(x.value, Array):
        return _unknown_call(rw, call)
    rank = x.value.layout.rank
    src = [s % rank for s in _ints(rw, [call.arg(1, "source")], "moveaxis", call.node)]
    dst = [d % rank for d in _ints(rw, [call.arg(2, "destination")], "moveaxis", call.node)]
    order = [n for n in range(rank) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _permuted(x, order), call.rebuild(rw, {})


# -- reshape ----------------------------------------------------------------------------------------


def is_reshape(rw, node: cst.BaseExpression) -> bool:
    """Whether ``node`` is ``x.reshape(...)`` or ``jnp.reshape(x, ...)``."""
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if rw.ctx.qualified_names(func) & {"jax.numpy.reshape"}:
        return True
    from meshify.rewrite._ops import _is_module_path

    return isinstance(func, cst.Attribute) and func.attr.value == "reshape" and not _is_module_path(rw, func)


@op("jax.numpy.reshape", method="reshape", reads=("a", "shape", "args", "copy"))
def _reshape_unnamed(rw, call: Call):
    x = _x(call)
    if isinstance(x.value, Array) and (x.value.layout.is_split or x.value.layout.partial):
        raise rw.error(UnsupportedError, call.node,
                       f"reshape of {rw.ctx.code(x.original)!r} (layout {x.value.layout.describe()}) without "
                       "names for the new dims",
                       "name them with an annotated assignment: h: Tensor[\"batch\", \"heads\", \"d_head\"] = "
                       + rw.ctx.code(call.node))
    return _unknown_call(rw, call)


def reshape_named(rw, node: cst.Call, dims: tuple[str, ...]) -> Operand:
    """``h: Tensor[dims] = x.reshape(...)``: the result's layout, with per-shard sizes in the call."""
    call = _evaluate(rw, node)
    x = _x(call)
    if not isinstance(x.value, Array):
        return Operand(Opaque(), node, call.rebuild(rw, {}))
    sizes, size_nodes = _shape_operands(rw, call)
    if len(size_nodes) != len(dims):
        raise rw.error(LayoutError, node, f"reshape to {len(size_nodes)} sizes but the hint names {len(dims)} "
                       f"dims {list(dims)}", "give the hint one name per size")
    layout = x.value.layout.with_partial(x.value.layout.partial)
    out_axes = _reshape_axes(rw, node, layout, dims)
    new_sizes = [_local_size(rw, s, n, rw.mesh.size(a), d) for s, n, a, d in zip(sizes, size_nodes, out_axes, dims)]
    value = Array(Layout(dims, tuple(out_axes), layout.partial), x.value.origin)
    return Operand(value, node, _with_sizes(rw, call, x, new_sizes))


def _evaluate(rw, node: cst.Call) -> Call:
    from meshify.rewrite._ops import _evaluate_args

    func = node.func
    receiver = None
    if isinstance(func, cst.Attribute) and func.attr.value == "reshape" and \
            not rw.ctx.qualified_names(func) & {"jax.numpy.reshape"}:
        receiver = rw.expr(func.value)
    return _evaluate_args(rw, node, "reshape", receiver)


def _shape_operands(rw, call: Call) -> tuple[list, list[cst.BaseExpression]]:
    """The size operands of a reshape, unpacking a tuple literal: (evaluated, original nodes)."""
    if call.receiver is not None:
        args = list(call.node.args)
    else:
        args = [a for a in call.node.args[1:]]
        if not args and ("newshape" in call.kwargs or "shape" in call.kwargs):
            args = [a for a in call.node.args if a.keyword and a.keyword.value in ("shape", "newshape")]
    if len(args) == 1 and isinstance(args[0].value, cst.Tuple | cst.List):
        nodes = [e.value for e in args[0].value.elements]
    else:
        if len(args) == 1 and not isinstance(args[0].value, cst.Tuple | cst.List):
            single = rw.expr(args[0].value).value
            if isinstance(single, Static) and single.shape_of:
                raise rw.error(UnsupportedError, args[0].value, "reshape to a whole shape variable",
                               "spell the sizes out: x.reshape(b, l, heads, d_head)")
        nodes = [a.value for a in args]
    return [rw.expr(n) for n in nodes], nodes


def _reshape_axes(rw, node, layout: Layout, out: tuple[str, ...]) -> list[Axes]:
    """Maps input dims to output dims through names they share; splits follow the major part."""
    ins = layout.dims
    shared = [d for d in ins if d != BROADCAST and ins.count(d) == 1 and out.count(d) == 1]
    anchors = [(ins.index(d), out.index(d)) for d in shared]
    if [j for _, j in anchors] != sorted(j for _, j in anchors):
        raise rw.error(LayoutError, node, f"reshape from {list(ins)} to {list(out)} reorders dims",
                       "reshape keeps the order of elements: transpose first")
    axes: list[Axes] = [()] * len(out)
    bounds = [(-1, -1), *anchors, (len(ins), len(out))]
    for (i0, j0), (i1, j1) in zip(bounds, bounds[1:]):
        group_in = list(range(i0 + 1, i1))
        group_out = list(range(j0 + 1, j1))
        _group(rw, node, layout, out, group_in, group_out, axes)
        if i1 < len(ins):
            axes[j1] = layout.axes[i1]
    return axes


def _group(rw, node, layout: Layout, out, group_in: list[int], group_out: list[int], axes: list[Axes]) -> None:
    split = [i for i in group_in if layout.axes[i]]
    if not split:
        return
    if split != [group_in[0]] or not group_out:
        names = [layout.dims[i] for i in group_in]
        raise rw.error(UnsupportedError, node,
                       f"reshape merges {names} into {[out[j] for j in group_out]} but split dim "
                       f"{layout.dims[split[-1]]!r} is not the major (first) part",
                       "split only the first dim of a merge (e.g. merge [heads, d_head] with heads split), "
                       "or transpose so that the split dim comes first")
    axes[group_out[0]] = layout.axes[group_in[0]]


def _local_size(rw, size: Operand, node: cst.BaseExpression, shards: int, dim: str) -> cst.BaseExpression:
    if shards == 1:
        return size.node
    literal = _literal(size)
    if isinstance(literal, int):
        if literal == -1:
            return size.node
        if literal % shards:
            raise rw.error(LayoutError, node, f"reshape size {literal} of dim {dim!r} is not divisible by its "
                           f"{shards} shards", f"choose a size of {dim!r} that is a multiple of {shards}")
        return int_node(literal // shards)
    # Known only when the function runs: checked then (a size the shards do not divide is an error).
    return call_template("{mr}.shard_size({size}, {shards}, {dim})", mr=cst.Name(rw.ctx.mr), size=size.node,
                         shards=int_node(shards), dim=cst.SimpleString(f'"{dim}"'))


def _with_sizes(rw, call: Call, x: Operand, sizes: list[cst.BaseExpression]) -> cst.Call:
    node = call.node
    func = node.func.with_changes(value=x.node) if call.receiver is not None else node.func
    if call.receiver is not None:
        args = list(node.args)
    else:
        args = list(node.args[1:])
    if len(args) == 1 and isinstance(args[0].value, cst.Tuple | cst.List):
        inner = args[0].value
        args = [args[0].with_changes(value=inner.with_changes(
            elements=[e.with_changes(value=s) for e, s in zip(inner.elements, sizes)]))]
    else:
        args = [a.with_changes(value=s) for a, s in zip(args, sizes)]
    if call.receiver is None:
        args = [node.args[0].with_changes(value=x.node), *args]
    return node.with_changes(func=func, args=args)


# -- concatenate / stack ------------------------------------------------------------------------------


def _sequence(rw, call: Call, keyword: str):
    seq = call.arg(0, keyword)
    node = seq.original if seq is not None else None
    if not isinstance(node, cst.List | cst.Tuple):
        raise rw.error(UnsupportedError, call.node, f"{call.name} of something other than a list literal",
                       f"write {call.name.rsplit('.', 1)[-1]}([a, b], axis=...)")
    # The elements were evaluated with the call's arguments; walking them again would repeat their comments.
    values = seq.value.items if isinstance(seq.value, TupleValue) else [seq.value] * len(node.elements)
    return seq, [Operand(v, e.value, n.value) for v, e, n in zip(values, node.elements, seq.node.elements)]


@op("jax.numpy.concatenate", kind="concatenate", reads=("arrays", "axis", "dtype"))
@op("jax.numpy.stack", kind="stack", reads=("arrays", "axis", "dtype"))
def _join(rw, call: Call, kind: str):
    seq, items = _sequence(rw, call, "arrays")
    arrays = [i for i in items if isinstance(i.value, Array)]
    if not arrays:
        return _unknown_call(rw, call)
    if len(arrays) != len(items):
        raise rw.error(LayoutError, call.node, f"{kind} of arrays whose dims meshify cannot infer",
                       "annotate each operand with a Tensor hint")
    rank = arrays[0].value.layout.rank
    axis_op = call.arg(1, "axis")
    axis = _literal(axis_op) if axis_op is not None else 0
    if not isinstance(axis, int):
        raise rw.error(UnsupportedError, call.node, f"{kind} needs a literal axis", "write axis=<int literal>")
    axis %= rank + (1 if kind == "stack" else 0)
    if any(a.value.layout.rank != rank for a in arrays):
        raise rw.error(LayoutError, call.node, f"{kind} of arrays of different ranks",
                       "give every array the same dims (expand with x[None] where needed)")
    dims = arrays[0].value.dims
    candidates: dict[int, list[Axes]] = {}
    for a in arrays:
        if a.value.dims != dims and kind == "stack":
            raise rw.error(LayoutError, call.node, f"stack of arrays with dims {list(a.value.dims)} and {list(dims)}",
                           "stack arrays with the same dims in the same order")
        for i, ax in enumerate(a.value.layout.axes):
            if ax and (kind == "stack" or i != axis) and ax not in candidates.setdefault(i, []):
                candidates[i].append(ax)
    chosen = choose_splits(list(range(rank)), candidates, {i: rw.rules.axes(d) for i, d in enumerate(dims)})
    if kind == "concatenate":
        chosen[axis] = ()
    keep = _kept_partial(items, ADD) - {x for ax in chosen.values() for x in ax}
    nodes = [rw.convert(a, Layout(a.value.dims, tuple(chosen[i] for i in range(rank)), a.value.layout.partial & keep),
                        kind) for a in arrays]
    elements = [e.with_changes(value=n) for e, n in zip(seq.original.elements, nodes)]
    new_seq = seq.original.with_changes(elements=elements)
    new = call.rebuild(rw, {0: new_seq})
    out_axes = [chosen[i] for i in range(rank)]
    out_dims = list(dims)
    if kind == "stack":
        out_dims.insert(axis, "stacked")
        out_axes.insert(axis, ())
    return Array(Layout(tuple(out_dims), tuple(out_axes), frozenset(keep))), new


# -- constructors and masks ---------------------------------------------------------------------------


def _shape_dims(operand) -> tuple[str, ...] | None:
    if operand is None or not isinstance(operand.value, Static):
        return None
    if operand.value.shape_of:
        return operand.value.shape_of
    if operand.value.size_of:
        return (operand.value.size_of,)
    return None


def _literal_shape(operand) -> tuple[int, ...] | None:
    """The shape an operand spells out as int literals (``8``, ``(4, 8)``), else None."""
    lit = _literal(operand)
    if isinstance(lit, int) and not isinstance(lit, bool):
        return (lit,)
    if isinstance(lit, tuple | list) and all(isinstance(n, int) and not isinstance(n, bool) for n in lit):
        return tuple(lit)
    return None


def _built(dims: tuple[str, ...] | None, shape_operand) -> Array | Opaque:
    """A freshly built whole array: named by the dims its shape came from, else opaque with the
    shape the code spells out (``jnp.zeros((4, 8))``)."""
    if dims is not None:
        return Array(Layout.replicated(dims))
    return Opaque(_literal_shape(shape_operand))


@op("jax.numpy.zeros", "jax.numpy.ones", "jax.numpy.empty", "jax.numpy.full", reads=("shape", "fill_value", "dtype"))
def _filled(rw, call: Call):
    shape = call.arg(0, "shape")
    fill = call.arg(1, "fill_value") if call.name.endswith("full") else None
    replaced = {}
    if fill is not None and isinstance(fill.value, Array):
        if fill.value.layout.rank:
            raise rw.error(UnsupportedError, fill.original,
                           f"jnp.full with an array fill value {rw.ctx.code(fill.original)!r} of dims "
                           f"{list(fill.value.dims)}", "broadcast it instead: jnp.broadcast_to(v, shape), or "
                           "jnp.zeros(shape) + v")
        # Every device must fill with the whole value: a partial sum is reduced first.
        replaced[call.position(fill)] = rw.convert(fill, fill.value.layout.with_partial(()), "jnp.full's fill value")
    elif fill is not None and isinstance(fill.value, Opaque | TupleValue | StructValue):
        return _unknown_call(rw, call)
    return _built(_shape_dims(shape), shape), call.rebuild(rw, replaced)


@op("jax.numpy.arange", reads=("start", "stop", "step", "dtype"))
def _arange(rw, call: Call):
    dims = _shape_dims(call.arg(0, "start"))
    if set(call.kwargs) - {"dtype"}:
        return _unknown_call(rw, call)
    if dims is not None and len(call.args) == 1:
        return Array(Layout.replicated(dims)), call.rebuild(rw, {})
    bounds = [_literal(o) for o in call.args[:3]]
    if not bounds or not all(isinstance(b, int | float) and not isinstance(b, bool) for b in bounds):
        return _unknown_call(rw, call)
    start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
    return Opaque((max(0, math.ceil((stop - start) / step)),)), call.rebuild(rw, {})


@op("jax.numpy.zeros_like", "jax.numpy.ones_like", "jax.numpy.empty_like", "jax.numpy.full_like",
    reads=("a", "prototype", "fill_value", "dtype", "shape"))
def _like(rw, call: Call):
    x = call.arg(0, "a")
    if not isinstance(x.value, Array) or "shape" in call.kwargs or len(call.args) > 3:
        return _unknown_call(rw, call)
    # Only the shape matters: the result is the same on every device of a partial axis.
    shape = Operand(Array(x.value.layout.with_partial(())), x.original, x.node)
    fill = call.arg(1, "fill_value") if call.name.endswith("full_like") else None
    if fill is None or isinstance(fill.value, Static):
        return shape.value, call.rebuild(rw, {})
    # An array fill broadcasts into the shape: aligned like an elementwise op (a partial sum reduced).
    value, (x_node, fill_node) = elementwise(rw, [shape, fill], NONLINEAR, call.node, "full_like")
    if value.dims != shape.value.dims:
        raise rw.error(LayoutError, fill.original, f"full_like's fill value {rw.ctx.code(fill.original)!r} "
                       f"has more dims than {rw.ctx.code(x.original)!r}", "fill with a value that broadcasts "
                       "into the array's shape")
    return value, call.rebuild(rw, {call.position(x): x_node, call.position(fill): fill_node})


@op("jax.numpy.tril", "jax.numpy.triu")
def _triangle(rw, call: Call):
    m = call.arg(0, "m")
    if not isinstance(m.value, Array):
        return _unknown_call(rw, call)
    layout = m.value.layout
    if layout.rank < 2:
        raise rw.error(LayoutError, call.node, f"{call.name} needs at least 2 dims",
                       "pass a matrix (or a stack of them)")
    target = Layout(layout.dims, (*layout.axes[:-2], (), ()))
    node = rw.convert(m, target, call.name.rsplit(".", 1)[-1] + " (positions must be global)")
    return Array(target), call.rebuild(rw, {0: node})


# -- indexing --------------------------------------------------------------------------------------------


def index_array(rw, node: cst.Subscript, base: Operand) -> Operand:
    """``x[...]`` on an array: basic indexing, or a lookup when the index is an array."""
    elements = list(node.slice)
    if len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
        index = rw.expr(elements[0].slice.value)
        if isinstance(index.value, Array):
            value, new, ids, table = lookup(rw, base, index, 0, node)
            new_index = elements[0].with_changes(slice=elements[0].slice.with_changes(value=ids))
            if new is None:
                return Operand(value, node, node.with_changes(value=table, slice=[new_index]))
            return Operand(value, node, new)
    layout = base.value.layout
    dims, axes = [], []
    pos = 0
    explicit = sum(1 for e in elements if not _is_none(rw, e) and not _is_ellipsis(e))
    for element in elements:
        if _is_none(rw, element):
            dims.append(BROADCAST)
            axes.append(())
            continue
        if _is_ellipsis(element):
            skip = layout.rank - explicit
            dims.extend(layout.dims[pos:pos + skip])
            axes.extend(layout.axes[pos:pos + skip])
            pos += skip
            continue
        if pos >= layout.rank:
            raise rw.error(LayoutError, node, f"too many indices for {rw.ctx.code(node.value)!r} with dims "
                           f"{list(layout.dims)}", "give at most one index per dim")
        kind = _index_kind(rw, element)
        if kind == "full":
            dims.append(layout.dims[pos])
            axes.append(layout.axes[pos])
        elif layout.axes[pos]:
            raise rw.error(UnsupportedError, element,
                           f"indexing split dim {layout.dims[pos]!r} of {rw.ctx.code(node.value)!r} "
                           f"(layout {layout.describe()})",
                           f"index before sharding, or map {layout.dims[pos]!r} to no mesh axis")
        elif kind == "slice":
            dims.append(layout.dims[pos])
            axes.append(())
        pos += 1
    dims.extend(layout.dims[pos:])
    axes.extend(layout.axes[pos:])
    value = Array(Layout(tuple(dims), tuple(axes), layout.partial), base.value.origin)
    return Operand(value, node, node.with_changes(value=base.node))


_NEWAXIS = frozenset({"jax.numpy.newaxis", "numpy.newaxis"})


def _is_none(rw, element: cst.SubscriptElement) -> bool:
    """``None`` or ``jnp.newaxis``/``np.newaxis`` (which is None)."""
    if not isinstance(element.slice, cst.Index):
        return False
    value = element.slice.value
    if isinstance(value, cst.Name) and value.value == "None":
        return True
    return isinstance(value, cst.Attribute) and bool(rw.ctx.qualified_names(value) & _NEWAXIS)


def _is_ellipsis(element: cst.SubscriptElement) -> bool:
    return isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.Ellipsis)


def _index_kind(rw, element: cst.SubscriptElement) -> str:
    """``full`` for ``:``, ``slice`` for other slices, ``int`` for a static index."""
    if isinstance(element.slice, cst.Slice):
        s = element.slice
        return "full" if s.lower is None and s.upper is None and s.step is None else "slice"
    value = rw.expr(element.slice.value).value
    if isinstance(value, Static):
        return "int"
    raise rw.error(UnsupportedError, element, "advanced indexing with an array beside other indices",
                   "use jnp.take or jnp.take_along_axis")


# -- lookups ------------------------------------------------------------------------------------------


def lookup(rw, table: Operand, ids: Operand, axis: int, node, mode: str = "index", fill=None,
           ) -> tuple[Array, cst.BaseExpression | None, cst.BaseExpression, cst.BaseExpression]:
    """``table`` indexed by ``ids`` along ``axis``: a masked local lookup where that dim is split.

    Returns the result, the replacement expression (None: keep the user's), the ids' node and
    the table's node (reduced first over the axes the ids are split on, where it is partial).
    """
    t = table.value.layout
    mark_index(rw, ids)
    ids_node = rw.convert(ids, ids.value.layout.with_partial(()), "lookup index")
    i = ids.value.layout
    # The result is split like the ids: it cannot stay a partial sum over those axes.
    t = t.with_partial(t.partial - i.split_axes)
    table_node = rw.convert(table, t, "a lookup with an index split over the same axes")
    rest_dims = t.dims[:axis] + t.dims[axis + 1:]
    rest_axes = t.axes[:axis] + t.axes[axis + 1:]
    clash = set(a for ax in i.axes for a in ax) & (set(a for ax in rest_axes for a in ax) | set(t.axes[axis]))
    if clash:
        raise rw.error(UnsupportedError, node, f"lookup whose index {rw.ctx.code(ids.original)!r} and table "
                       f"{rw.ctx.code(table.original)!r} are split over the same axis {sorted(clash)[0]!r}",
                       "split the index and the table over different mesh axes")
    dims = rest_dims[:axis] + i.dims + rest_dims[axis:]
    axes = rest_axes[:axis] + i.axes + rest_axes[axis:]
    split = t.axes[axis]
    if not split:
        return Array(Layout(dims, axes, t.partial)), None, ids_node, table_node
    partial = t.partial | set(split)
    value = Array(Layout(dims, axes, frozenset(partial)), f"lookup in split '{t.dims[axis]}'")
    new = call_template("{mr}.take({t}, {i}, axis={axis}, axis_name={axes}, mode={mode}%s)"
                        % (", fill_value={fill}" if fill is not None else ""), mr=cst.Name(rw.ctx.mr),
                        t=table_node, i=ids_node, axis=int_node(axis), axes=axes_node(split),
                        mode=cst.SimpleString(f'"{mode}"'), **({"fill": fill.node} if fill is not None else {}))
    rw._comments.append(f"masked local lookup in split '{t.dims[axis]}' of {rw.ctx.code(table.original)}; "
                        f"the result is a partial sum over {_axes(split)}")
    return value, new, ids_node, table_node


def mark_index(rw, operand: Operand) -> None:
    """Remembers the names an index expression reads: parameters among them hold integers."""
    class _Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            rw.index_names.add(node.value)

    operand.original.visit(_Names())


def _axes(axes) -> str:
    return " x ".join(f"'{a}'" for a in axes)


#: jnp.take's modes, and what a missing or None mode means.
_MODES = ("fill", "clip", "wrap")


def _lookup_mode(rw, call: Call, mode_op, fill_op) -> tuple[str, Operand | None]:
    """The ``mode=`` of a take (a literal, default ``fill``) and its ``fill_value=`` operand, if any."""
    mode = "fill" if mode_op is None or _literal(mode_op) is None else _literal(mode_op)
    if mode not in _MODES:
        raise rw.error(UnsupportedError, mode_op.original, f"{call.name}(mode={rw.ctx.code(mode_op.original)})",
                       "write the mode as a literal: mode=\"fill\", \"clip\" or \"wrap\"")
    if fill_op is not None and _literal(fill_op) is None:
        fill_op = None
    if fill_op is not None and not isinstance(fill_op.value, Static):
        raise rw.error(UnsupportedError, fill_op.original, f"{call.name}(fill_value=...) with an array",
                       "fill with a Python scalar")
    return mode, fill_op


@op("jax.numpy.take")
def _take(rw, call: Call):
    table, ids = call.arg(0, "a"), call.arg(1, "indices")
    axis = _literal(call.arg(2, "axis")) if call.arg(2, "axis") is not None else None
    if not isinstance(table.value, Array) or not isinstance(ids.value, Array):
        return _unknown_call(rw, call)
    if not isinstance(axis, int):
        raise rw.error(UnsupportedError, call.node, "jnp.take needs a literal axis=", "write axis=0")
    out = call.arg(3, "out")
    if out is not None and _literal(out) is not None:
        raise rw.error(UnsupportedError, out.original, "jnp.take(out=...)", "drop out=; JAX arrays are immutable")
    # unique_indices= and indices_are_sorted= are promises about ids: the masked local lookup keeps the
    # user's call where the table is whole, and needs neither where it is split.
    mode, fill = _lookup_mode(rw, call, call.arg(4, "mode"), call.arg(7, "fill_value"))
    value, new, ids_node, table_node = lookup(rw, table, ids, axis % table.value.layout.rank, call.node, mode, fill)
    if new is None:
        return value, call.rebuild(rw, {call.position(table): table_node, call.position(ids): ids_node})
    return value, new


@op("jax.numpy.take_along_axis")
def _take_along_axis(rw, call: Call):
    arr, idx = call.arg(0, "arr"), call.arg(1, "indices")
    axis = _literal(call.arg(2, "axis")) if call.arg(2, "axis") is not None else -1
    if not isinstance(arr.value, Array) or not isinstance(idx.value, Array):
        return _unknown_call(rw, call)
    if not isinstance(axis, int):
        raise rw.error(UnsupportedError, call.node, "take_along_axis needs a literal axis", "write axis=-1")
    a, i = arr.value.layout, idx.value.layout
    mark_index(rw, idx)
    if a.rank != i.rank:
        raise rw.error(LayoutError, call.node, "take_along_axis needs index and array of the same rank",
                       "give the index one dim per dim of the array")
    axis %= a.rank
    split = a.axes[axis]
    # The other dims broadcast like an elementwise op; the taken dim comes from the index.
    others = [d for d in range(a.rank) if d != axis]
    letters = {d: chr(ord("a") + d) for d in range(a.rank)}
    candidates: dict[str, list[Axes]] = {}
    for layout in (a, i):
        for d in others:
            if layout.axes[d] and layout.axes[d] not in candidates.setdefault(letters[d], []):
                candidates[letters[d]].append(layout.axes[d])
    chosen = choose_splits([letters[d] for d in others], candidates, {})
    if set(a for ax in chosen.values() for a in ax) & set(split):
        raise rw.error(UnsupportedError, call.node, "take_along_axis whose taken dim shares a mesh axis with "
                       "another dim", "map the taken dim and the other dims to different mesh axes")
    # A partial sum is reduced first over the axes the result is split on (like an elementwise op).
    partial = a.partial - {x for ax in chosen.values() for x in ax}
    a_target = Layout(a.dims, tuple(split if d == axis else (() if a.dims[d] == BROADCAST else chosen[letters[d]])
                                    for d in range(a.rank)), partial)
    i_target = Layout(i.dims, tuple(() if d == axis or i.dims[d] == BROADCAST else chosen[letters[d]]
                                    for d in range(a.rank)))
    arr_node = rw.convert(arr, a_target, "take_along_axis")
    idx_node = rw.convert(idx, i_target, "take_along_axis index")
    dims = tuple(i.dims[d] if d == axis else (a.dims[d] if a.dims[d] != BROADCAST else i.dims[d])
                 for d in range(a.rank))
    axes = tuple(() if d == axis else chosen[letters[d]] for d in range(a.rank))
    if not split:
        return Array(Layout(dims, axes, partial)), call.rebuild(rw, {call.position(arr): arr_node,
                                                                     call.position(idx): idx_node})
    mode, fill = _lookup_mode(rw, call, call.arg(3, "mode"), call.arg(4, "fill_value"))
    mode = "clip_wrapped" if mode == "clip" else mode  # take_along_axis wraps negative ids before clipping
    wrap = call.kwargs.get("wrap_negative_indices")
    if wrap is not None and _literal(wrap) not in (None, True):
        raise rw.error(UnsupportedError, wrap.original, "take_along_axis(wrap_negative_indices=False) over a "
                       f"split dim {a.dims[axis]!r}", "drop it (negative ids then wrap), or map the dim to no mesh axis")
    new = call_template("{mr}.take_along_axis({a}, {i}, axis={axis}, axis_name={axes}, mode={mode}%s)"
                        % (", fill_value={fill}" if fill is not None else ""), mr=cst.Name(rw.ctx.mr),
                        a=arr_node, i=idx_node, axis=int_node(axis), axes=axes_node(split),
                        mode=cst.SimpleString(f'"{mode}"'), **({"fill": fill.node} if fill is not None else {}))
    rw._comments.append(f"masked local take_along_axis over split '{a.dims[axis]}'; the result is a partial sum "
                        f"over {_axes(split)}")
    return Array(Layout(dims, axes, partial | frozenset(split)), f"lookup in split '{a.dims[axis]}'"), new


@op("jax.nn.one_hot", reads=("x", "num_classes", "dtype", "axis"))
def _one_hot(rw, call: Call):
    x, depth = call.arg(0, "x"), call.arg(1, "num_classes")
    if not isinstance(x.value, Array) or depth is None:
        return _unknown_call(rw, call)
    name = depth.value.size_of if isinstance(depth.value, Static) else None
    if name is None:
        raise rw.error(UnsupportedError, call.node, "one_hot depth whose dim meshify cannot name",
                       "pass the size of a named dim, e.g. jax.nn.one_hot(labels, logits.shape[-1])")
    mark_index(rw, x)
    x_node = rw.convert(x, x.value.layout.with_partial(()), "one_hot")
    used = x.value.layout.split_axes
    axes = rw.rules.axes(name)
    if set(axes) & used:
        axes = ()
    dims = (*x.value.dims, name)
    layout = Layout(dims, (*x.value.layout.axes, axes))
    if "axis" in call.kwargs:
        raise rw.error(UnsupportedError, call.kwargs["axis"].original, "one_hot(axis=...)", "one-hot the last dim")
    if not axes:
        return Array(layout), call.rebuild(rw, {0: x_node})
    extra = {k: v.node for k, v in call.kwargs.items() if k == "dtype"}
    template = "{mr}.one_hot({x}, {n}, axis_name={axes}" + (", dtype={dtype})" if extra else ")")
    new = call_template(template, mr=cst.Name(rw.ctx.mr), x=x_node, n=depth.node, axes=axes_node(axes), **extra)
    rw._comments.append(f"local one_hot: this device's block of '{name}', split over {_axes(axes)}")
    return Array(layout), new



# -- randomness and splitting -------------------------------------------------------------------------


#: jax.random samplers -> (position, keyword) of their shape argument.
_SAMPLERS = {"normal": (1, "shape"), "uniform": (1, "shape"), "bernoulli": (2, "shape"),
             "truncated_normal": (3, "shape"), "randint": (1, "shape"), "gumbel": (1, "shape"),
             "laplace": (1, "shape"), "exponential": (1, "shape"), "rademacher": (1, "shape")}


def _sampler(rw, call: Call, kind: str):
    """A draw for the *global* shape, the same on every device; consumers slice their block.

    So the sharded program draws bit-identical values to the single-device one.
    """
    position, keyword = _SAMPLERS[kind]
    for operand in [*call.args, *call.kwargs.values()]:
        if isinstance(operand.value, Array) and (operand.value.layout.is_split or operand.value.layout.partial):
            raise rw.error(UnsupportedError, operand.original,
                           f"jax.random.{kind} with {rw.ctx.code(operand.original)!r} of layout "
                           f"{operand.value.layout.describe()}: a draw must not depend on how arrays are split",
                           "pass replicated keys and parameters, and the global shape (shape=x.shape)")
    shape = call.arg(position, keyword)
    return _built(_shape_dims(shape), shape), call.rebuild(rw, {})


for _kind in _SAMPLERS:
    op(f"jax.random.{_kind}", kind=_kind)(_sampler)


@op("jax.numpy.split", "jax.numpy.array_split")
def _split(rw, call: Call):
    x, sections = call.arg(0, "ary"), call.arg(1, "indices_or_sections")
    if not isinstance(x.value, Array):
        return _unknown_call(rw, call)
    layout = x.value.layout
    axis = _literal(call.arg(2, "axis")) if call.arg(2, "axis") is not None else 0
    count = _literal(sections)
    if not isinstance(axis, int) or not (isinstance(count, int) or isinstance(count, tuple | list)):
        raise rw.error(UnsupportedError, call.node, "jnp.split needs a literal number of sections and axis",
                       "write jnp.split(x, 3, axis=-1)")
    axis %= layout.rank
    if layout.axes[axis]:
        dim = layout.dims[axis]
        raise rw.error(UnsupportedError, call.node,
                       f"jnp.split along dim {dim!r}, which is split over {_axes(layout.axes[axis])}: each device "
                       "holds one block of the fused dim, not a piece of every section",
                       f"give the sections their own dim instead of fusing them into {dim!r}, e.g. a "
                       "[d_model, 3, heads, d_head] QKV weight with heads split, indexed w[:, 0], w[:, 1], w[:, 2]")
    n = count if isinstance(count, int) else len(count) + 1
    return TupleValue(tuple(Array(layout, x.value.origin) for _ in range(n))), call.rebuild(rw, {})
