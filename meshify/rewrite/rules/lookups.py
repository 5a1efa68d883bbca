"""Indexing and lookups: basic indexing (``None``, ``...``, ``:``, ints and slices on unsplit
dims), and lookups on a split table (``emb[ids]``, ``jnp.take``, ``take_along_axis``) as a
masked local lookup plus a deferred psum, with jnp's modes for negative and out-of-range
ids; ``one_hot`` with a split depth.
"""

from __future__ import annotations

import libcst as cst

from meshify.annotate._types import BROADCAST, INFERRED, Axes, Layout, sliced_dim, unify_dims, unsliced
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._collectives import axes_text
from meshify.rewrite._plan import choose_splits
from meshify.rewrite._values import Array, Opaque, Operand, Static, Value, array
from meshify.rewrite.rules._api import Call, Convert, Lowering, MeshAxes, Ref, RuleContext, op, unknown_call
from meshify.rewrite.rules.control import _axes_code
from meshify.rewrite.rules.shapes import _expr_name, _literal

# -- indexing --------------------------------------------------------------------------------------------


def basic_index(ctx: RuleContext, node: cst.Subscript, base: Operand) -> Value:
    """``x[...]`` on an array with basic indexing (``None``, ``...``, ``:``, ints and slices on unsplit
    dims): the result's value.  The interpreter evaluated each index and bound first
    (:meth:`RuleContext.operand`), tried :func:`array_index` (a lookup) and the slices of split dims."""
    elements = list(node.slice)
    array = base.value
    assert isinstance(array, Array), array
    layout = array.layout
    dims: list[str] = []
    axes: list[Axes] = []
    pos = 0
    explicit = sum(1 for e in elements if not _is_none(ctx, e) and not _is_ellipsis(e))
    for element in elements:
        if _is_none(ctx, element):
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
            raise ctx.error(LayoutError, node, f"too many indices for {ctx.code(node.value)!r} with dims "
                            f"{list(layout.dims)}", "give at most one index per dim")
        kind = _index_kind(ctx, element)
        if kind == "full":
            dims.append(layout.dims[pos])
            axes.append(layout.axes[pos])
        elif layout.axes[pos]:
            raise ctx.error(UnsupportedError, element,
                            f"indexing split dim {layout.dims[pos]!r} of {ctx.code(node.value)!r} "
                            f"(layout {layout.describe()})",
                            f"index before sharding, or map {layout.dims[pos]!r} to no mesh axis")
        elif kind == "slice" and isinstance(element.slice, cst.Slice):
            dims.append(_sliced_dim(ctx, element.slice, layout.dims[pos]))
            axes.append(())
        pos += 1
    dims.extend(layout.dims[pos:])
    axes.extend(layout.axes[pos:])
    return Array(Layout(tuple(dims), tuple(axes), layout.partial), array.origin)


def _sliced_dim(ctx: RuleContext, s: cst.Slice, dim: str) -> str:
    """The dim a slice leaves: ``wpe[:tokens.shape[1]]`` is as long as the tokens' dim (GPT-2's position
    table cut to the sequence's length), any other slice keeps its own dim's name."""
    upper = ctx.operand(s.upper).value if s.upper is not None and s.step is None else None
    lower = ctx.operand(s.lower).value if s.lower is not None else Static.of(0)
    if isinstance(upper, Static) and upper.size_of is not None and lower == Static.of(0):
        return upper.size_of
    if s.upper is None and s.step is None and isinstance(s.lower, cst.UnaryOperation) \
            and isinstance(s.lower.operator, cst.Minus):  # (cat([mem, h]) @ w)[:, -qlen:]: the last qlen rows
        inner = s.lower.expression
        last = ctx.bound(inner.value) if isinstance(inner, cst.Name) else None
        if isinstance(last, Static) and last.size_of is not None:
            return last.size_of
    if dim == BROADCAST:
        return dim
    # x[..., ::2], x[..., :D // 2], tokens[:, 1:]: another size than the dim's, so an inferred name, which
    # lines up with a user's (a rotary table's 'rotary') or with the same slice of another value; literal
    # bounds are spelled in it (seq[1:]?), so that explain sizes it from the dim's size
    bounds = [_int_bound(ctx, b) for b in (s.lower, s.upper, s.step)]
    if bounds in _ONE_ENTRY:  # top_k(...)[0][:, -1:], h[:, :1]: one entry of any non-empty dim, which
        return BROADCAST      # broadcasts as a keepdims result does (never lined up with a split dim)
    lo, hi, step = bounds
    if type(lo) is int and type(hi) is int and step in (None, 1) and hi - lo == 1 and (lo >= 0 or hi < 0):
        return BROADCAST  # s[:, 4:5] (a threshold read off sorted logits): one entry wherever the dim reaches it
    if all(b is not False for b in bounds) and type(step) is not str:
        return sliced_dim(dim, *bounds)  # type: ignore[arg-type]
    return unsliced(dim) + INFERRED


#: Literal slice bounds (lower, upper, step) that leave one entry of any dim of size one or more.
_ONE_ENTRY = ([-1, None, None], [None, 1, None], [0, 1, None], [-1, None, 1], [None, 1, 1], [0, 1, 1])


def _int_bound(ctx: RuleContext, node: cst.BaseExpression | None) -> int | str | None | bool:
    """A slice bound: None where omitted, an int literal's value, the name of a Python int meshify cannot
    read (``half``, ``-half``: spelled in the sliced dim's name), else False."""
    if node is None:
        return None
    value = ctx.operand(node).value
    if isinstance(value, Static) and value.known and type(value.literal) is int:
        return value.literal
    negative = isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)
    name = node.expression if negative else node  # type: ignore[attr-defined]
    if isinstance(value, Static) and not value.known and isinstance(name, cst.Name) \
            and isinstance(ctx.bound(name.value), Static) and _bindings(ctx.function, name.value) == 1:
        return ("-" if negative else "") + name.value  # (bound once: every slice by it cuts at one place)
    return False


def _bindings(function: cst.FunctionDef, name: str) -> int:
    """How many times ``function`` binds ``name`` (assignments, loop targets, parameters; not in nested defs)."""
    from meshify.rewrite._context import _bound_names

    count = 0

    class _Count(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            self.add(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            self.add(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self.add(node.target)

        def visit_For(self, node: cst.For) -> None:
            self.add(node.target)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            self.add(node.target)

        def visit_Param(self, node: cst.Param) -> None:
            self.add(node.name)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is function

        @staticmethod
        def add(target: cst.CSTNode) -> None:
            nonlocal count
            count += _bound_names(target).count(name)

    function.visit(_Count())
    return count


def array_index(ctx: RuleContext, elements: list[cst.SubscriptElement]) -> tuple[int, Operand] | None:
    """``x[ids]``, ``x[:, ids]``: the one array index, beside full slices only, and the dim it looks up
    (``jnp.take(x, ids, axis)``: the index's dims take that dim's place); None for basic indexing."""
    for axis, element in enumerate(elements):
        if isinstance(element.slice, cst.Index) and not _is_none(ctx, element) and not _is_ellipsis(element):
            index = ctx.operand(element.slice.value)
            if isinstance(index.value, Opaque) and index.value.shape is not None:
                # x[:, off + jnp.arange(4)]: ids of a literal shape, whole on every device, their dims named after
                # them (as jnp.take's literal ids)
                index = _literal_ids(ctx, index, element)
            others = elements[:axis] + elements[axis + 1:]
            if isinstance(index.value, Array) and not any(isinstance(e.slice, cst.Index) and not _is_none(ctx, e)
                                                          and not _is_ellipsis(e) and isinstance(
                                                              ctx.operand(e.slice.value).value, Array)
                                                          for e in others) \
                    and all(_index_kind(ctx, e) == "full" for e in others):
                return axis, index
    return None


def multi_index(ctx: RuleContext, node: cst.Subscript, base: Operand) -> Lowering | None:
    """``z[:, iu, ju]`` (the upper triangle of pairwise interactions, ``iu, ju = jnp.triu_indices(F, 1)``):
    two or more index arrays of the same dims beside full slices, on dims that are not split.  Each device
    indexes its own block (the full-slice dims keep their splits); the index arrays' dims take the indexed
    dims' place where they stand together, else come first, as NumPy places them; an index array split over
    a mesh axis the array is split over too is made whole first.  Its converts are the array, then each index
    in order; None where the index is any other (basic indexing and one array index are done elsewhere)."""
    elements = list(node.slice)
    layout = array(base).layout
    if len(elements) > layout.rank:
        return None
    at: list[int] = []
    for pos, element in enumerate(elements):
        s = element.slice
        if isinstance(s, cst.Slice) and s.lower is None and s.upper is None and s.step is None:
            continue
        if not isinstance(s, cst.Index) or _is_none(ctx, element) or _is_ellipsis(element) \
                or not isinstance(ctx.operand(s.value).value, Array):
            return None
        at.append(pos)
    indices = [ctx.operand(elements[p].slice.value) for p in at]  # type: ignore[attr-defined]
    if len(at) < 2 or len({array(i).dims for i in indices}) != 1:
        return None
    split = [a for pos in at for a in layout.axes[pos]]
    first = array(indices[0]).layout
    used = layout.split_axes
    index_axes = tuple(() if set(a) & used else a for a in first.axes)
    if any(set(array(i).layout.split_axes) & used for i in indices):
        index_axes = ((),) * first.rank
    target = Layout(first.dims, index_axes)
    kept = [(layout.dims[p], layout.axes[p]) for p in range(layout.rank) if p not in at]
    together = at == list(range(at[0], at[-1] + 1))
    where = at[0] if together else 0
    if any(d in first.dims for d, _ in kept):
        raise ctx.error(LayoutError, node, f"{ctx.code(node)!r}: the index arrays' dims {list(first.dims)} meet "
                        f"the dims kept of {ctx.code(node.value)!r} ({layout.describe()})",
                        "name the index arrays' dims apart from the array's (pairs: Tensor[\"pairs\"] = iu)")
    dims = [d for d, _ in kept]
    axes = [a for _, a in kept]
    dims[where:where] = list(first.dims)
    axes[where:where] = list(index_axes)
    converts = (Convert(base, layout, "indexing"),
                *(Convert(i, target, "an index array (whole where the array is split alike)") for i in indices))
    if not split:
        return Lowering(Array(Layout(tuple(dims), tuple(axes), layout.partial), array(base).origin), converts,
                        indices=tuple(indices))
    # z[:, iu, ju] with z's rows split: each device reads the entries its block holds, zeros elsewhere (a masked
    # local lookup, as for a split table), so the result is a partial sum over those axes
    names = ", ".join(repr(layout.dims[p]) for p in at if layout.axes[p])
    ids = "".join(f"{{i{k}}}, " for k in range(len(indices)))
    template = "{mr}.multi_index({x}, {dims}, (" + ids + "), {axes})"
    fill = (("x", Ref(0)), ("dims", tuple(at)), ("axes", tuple(MeshAxes(layout.axes[p]) for p in at)),
            *((f"i{k}", Ref(k + 1)) for k in range(len(indices))))
    value = Array(Layout(tuple(dims), tuple(axes), layout.partial | frozenset(split)), f"lookup in split {names}")
    note = f"masked local lookup of index arrays along split {names}; the result is a partial sum over " \
           f"{axes_text(tuple(dict.fromkeys(split)))}"
    return Lowering(value, converts, template, fill, notes=(note,), indices=tuple(indices))


@op("jax.numpy.triu_indices", "jax.numpy.tril_indices", reads=("n", "k", "m"))
def _triangle_indices(ctx: RuleContext, call: Call):
    """``iu, ju = jnp.triu_indices(F, 1)``: the rows and columns of a triangle, two whole vectors of one dim,
    named after the dim ``n`` sizes (``feat_triu?``: a size meshify reads when tracing)."""
    from meshify.rewrite._values import TupleValue

    n = call.params.get("n")
    if n is None or not isinstance(n.value, Static):
        return unknown_call(ctx, call)
    kind = call.name.rsplit(".", 1)[-1].split("_")[0]
    source = n.value.size_of or _expr_name(n.original) or "n"
    name = f"{source.rstrip(INFERRED)}_{kind}{INFERRED}"
    vector = Array(Layout.replicated((name,)))
    return Lowering(TupleValue((vector, vector)))


_NEWAXIS = frozenset({"jax.numpy.newaxis", "numpy.newaxis"})


def _is_none(ctx: RuleContext, element: cst.SubscriptElement) -> bool:
    """``None`` or ``jnp.newaxis``/``np.newaxis`` (which is None)."""
    if not isinstance(element.slice, cst.Index):
        return False
    value = element.slice.value
    if isinstance(value, cst.Name) and value.value == "None":
        return True
    return isinstance(value, cst.Attribute) and bool(ctx.qualified_names(value) & _NEWAXIS)


def _is_ellipsis(element: cst.SubscriptElement) -> bool:
    return isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.Ellipsis)


def _index_kind(ctx: RuleContext, element: cst.SubscriptElement) -> str:
    """``full`` for ``:``, ``slice`` for other slices, ``int`` for a static index."""
    if isinstance(element.slice, cst.Slice):
        s = element.slice
        return "full" if s.lower is None and s.upper is None and s.step is None else "slice"
    value = ctx.operand(element.slice.value).value
    if isinstance(value, Static):
        if _sequence(element.slice.value, value):
            code = ctx.code(element.slice.value)
            raise ctx.error(UnsupportedError, element, f"index {code!r} is a sequence of indices: an array index, "
                            "whose result has a dim of its own that meshify cannot name",
                            f"make it an array with a named dim, ids: Tensor[\"k\"] = jnp.asarray({code}), and "
                            "index with ids")
        return "int"
    if isinstance(value, Opaque):
        raise ctx.error(UnsupportedError, element, f"index {ctx.code(element.slice.value)!r} is an array whose "
                        "dims meshify cannot infer",
                        _bind_first(ctx.code(element.slice.value), "ids"))
    raise ctx.error(UnsupportedError, element, "advanced indexing with an array beside indices other than ':'",
                    "index the other dims first, or use jnp.take(x, ids, axis=...) or jnp.take_along_axis")


def _sequence(node: cst.BaseExpression, value: Static) -> bool:
    """A static index that is a list or tuple of indices (``x[:, [0, 2]]``, ``x[ROWS]``, ``x[list(range(3))]``),
    not one int: JAX makes it an array index (a new dim), where an int drops the dim."""
    if isinstance(node, cst.List | cst.Tuple | cst.ListComp | cst.Set | cst.SetComp | cst.GeneratorExp):
        return True
    if value.known and isinstance(value.literal, list | tuple | range | set):
        return True
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and \
        node.func.value in ("list", "tuple", "range", "sorted", "reversed")


# -- lookups ------------------------------------------------------------------------------------------


def lookup(ctx: RuleContext, table: Operand, ids: Operand, axis: int, node, mode: str = "index", fill=None) -> Lowering:
    """``table`` indexed by ``ids`` along ``axis``: a masked local lookup where that dim is split.

    Converts the ids (whole) then the table (reduced first over the axes the ids are split on,
    where it is partial); the template is None where the user's lookup runs as it is.
    """
    tv, iv = table.value, ids.value
    assert isinstance(tv, Array) and isinstance(iv, Array), (tv, iv)
    i = iv.layout
    # The ids split over an axis that splits the table's looked-up dim too (a vocab and the tokens both
    # over 'model'): either the table's dim is gathered (where that moves fewer bytes: _gather_is_cheaper)
    # or the ids are gathered over that axis (small integers), each device looks every id up in its
    # block of the table, and the result is a partial sum over it (a later hint splitting it again
    # makes that a psum_scatter).
    regathered = frozenset(i.split_axes) & set(tv.layout.axes[axis])
    t, dims, axes, gathered = _lookup_layouts(tv.layout, i, axis, fill)
    split = t.axes[axis]
    gather_table = bool(split) and _gather_is_cheaper(ctx, t, Layout(dims, axes), split)
    if regathered and not gather_table:
        i = Layout(i.dims, tuple(tuple(a for a in ax if a not in regathered) for ax in i.axes), i.partial)
        t, dims, axes, gathered = _lookup_layouts(tv.layout, i, axis, fill)
    else:
        regathered = frozenset()
    why = "lookup index" if not regathered else \
        f"lookup index (the table's '{t.dims[axis]}' is split over {axes_text(regathered)} too)"
    converts = (Convert(ids, i.with_partial(()), why),
                Convert(table, t, "a lookup with an index split over the same axes", varying=gathered))
    if gather_table:
        whole = Layout(t.dims, tuple(() if d == axis else ax for d, ax in enumerate(t.axes)), t.partial)
        converts = (converts[0], Convert(table, whole, "a lookup whose result outweighs the table",
                                         varying=gathered))
        split = ()
    if not split:
        return Lowering(Array(Layout(dims, axes, t.partial)), converts, indices=(ids,))
    partial = t.partial | set(split)
    value = Array(Layout(dims, axes, frozenset(partial)), f"lookup in split '{t.dims[axis]}'")
    template = "{mr}.take({t}, {i}, axis={axis}, axis_name={axes}, mode={mode}%s)" % (
        ", fill_value={fill}" if fill is not None else "")
    fills = (("t", Ref(1)), ("i", Ref(0)), ("axis", axis), ("axes", MeshAxes(split)), ("mode", mode),
             *((("fill", fill.node),) if fill is not None else ()))
    note = (f"masked local lookup in split '{t.dims[axis]}' of {ctx.code(table.original)}; "
            f"the result is a partial sum over {axes_text(split)}")
    return Lowering(value, converts, template, fills, notes=(note,), indices=(ids,))


#: The scatters ``x.at[ids].how(v)`` runs over a split dim (each device its own rows).
SCATTERS = frozenset({"set", "add", "multiply", "mul", "divide", "min", "max", "power"})


def scatter(ctx: RuleContext, base: Operand, ids: Operand, axis: int, update: Operand, how: str, node,
            split_ok: bool = True, unique: bool = False) -> Lowering:
    """``x.at[:, ids].how(v)``: ``v`` put into the elements ``ids`` picks along ``axis`` (one array index,
    beside full slices): the region it writes has ``x``'s dims with the index's dims in ``axis``'s place.

    The ids are read whole (every device needs every update), the value converted to the region's layout
    (``x``'s splits, the index's dims whole; a partial sum completed: an update is not linear) and ``x``
    made whole where it is a partial sum.  Along an unsplit dim each device runs the user's scatter on
    its block; along a split one each puts only the ids in its block (``mr.scatter``: negative ids wrap
    and out-of-range ones are dropped, as JAX's scatter does on one device).  ``split_ok`` False refuses
    a split dim (a ``mode=`` other than dropping); ``unique``: the user promised unique ids
    (``unique_indices=True``, kept: JAX differentiates ``multiply`` only then)."""
    x, i = base.value, ids.value
    assert isinstance(x, Array) and isinstance(i, Array), (x, i)
    t = x.layout
    dims = (*t.dims[:axis], *i.dims, *t.dims[axis + 1:])
    what = f"{ctx.code(node)}"
    clash = sorted({d for d in i.dims if d in t.dims[:axis] + t.dims[axis + 1:] and d != BROADCAST})
    if clash:
        raise ctx.error(LayoutError, ids.original, f"the index {ctx.code(ids.original)!r} of dims {list(i.dims)} "
                        f"repeats {clash} of the array it scatters into (dims {list(t.dims)})",
                        "name the index's dims apart from the array's (ids: Tensor[\"k\"])")
    region = Layout(dims, (*t.axes[:axis], *((),) * len(i.dims), *t.axes[axis + 1:]))
    converts = [Convert(base, t.with_partial(()), "a scatter (an update needs it whole)"),
                Convert(ids, Layout(i.dims, ((),) * len(i.dims)), "scatter index (every device reads every id)")]
    if isinstance(update.value, Array):
        u = update.value.layout
        offset = region.rank - u.rank
        if offset >= 0 and u.dims != region.dims[offset:] and all(
                unify_dims(d, r) is not None for d, r in zip(u.dims, region.dims[offset:])):
            u = Layout(region.dims[offset:], u.axes, u.partial)  # dims meshify named (a rotary concatenate's d?)
            update = Operand(Array(u, update.value.origin), update.original, update.node)
        if offset < 0 or u.dims != region.dims[offset:]:
            raise ctx.error(LayoutError, update.original, f"{ctx.code(update.original)!r} has dims {list(u.dims)} "
                            f"but {what} puts it into elements of dims {list(region.dims)}",
                            "give the value the picked elements' dims (or the trailing ones of them)")
        converts.append(Convert(update, Layout(u.dims, region.axes[offset:]), f"the value a scatter puts ({how})"))
    elif isinstance(update.value, Opaque) and region.is_split:
        raise ctx.error(UnsupportedError, update.original,
                        f"{ctx.code(update.original)!r} is an array whose dims meshify cannot infer, scattered "
                        f"into elements of layout {region.describe()}",
                        f"name its dims where it is made: v: Tensor[...] = {ctx.code(update.original)}")
    result = Array(t.with_partial(()), x.origin)
    split = t.axes[axis]
    if not split:
        return Lowering(result, tuple(converts), indices=(ids,))
    if not split_ok:
        raise ctx.error(UnsupportedError, node, f"{what} with a mode other than dropping out-of-range ids, "
                        f"along split dim {t.dims[axis]!r} (layout {t.describe()})",
                        f"drop mode= (out-of-range ids are then dropped), or map {t.dims[axis]!r} to no mesh axis")
    value = "{v}" if len(converts) == 3 else "{value}"
    template = "{mr}.scatter({x}, {i}, " + value + ", axis={axis}, axis_name={axes}, how={how}" \
        + (", unique_indices=True)" if unique else ")")
    fills = (("x", Ref(0)), ("i", Ref(1)), ("axis", axis), ("axes", MeshAxes(split)), ("how", how),
             (("v", Ref(2)) if len(converts) == 3 else ("value", update.node)))
    note = f"masked local scatter ({how}) into split '{t.dims[axis]}' of {ctx.code(base.original)}: each device its own ids"
    return Lowering(result, tuple(converts), template, fills, notes=(note,), indices=(ids,))


def _lookup_layouts(t: Layout, i: Layout, axis: int, fill) -> tuple[Layout, tuple, tuple, frozenset]:
    """The table's layout for a lookup by ids of layout ``i`` (the looked-up dim as it is), the result's
    dims and axes, and the axes the table's other dims are gathered over."""
    # The result is split like the ids: it cannot stay a partial sum over those axes.
    t = t.with_partial(t.partial - i.split_axes if fill is None else ())  # a fill is read once, not per device
    # A table dim other than the looked-up one split over an axis the ids are split over (an
    # embedding's d_model over 'data' beside tokens split on the batch: FSDP) is gathered before
    # the lookup, as varying over that axis (its gradient is reduce-scattered back).
    used = i.split_axes
    gathered = frozenset(a for d, ax in enumerate(t.axes) if d != axis for a in ax if a in used)
    t = Layout(t.dims, tuple(ax if d == axis else tuple(a for a in ax if a not in used) for d, ax in enumerate(t.axes)),
               t.partial)
    rest_dims = t.dims[:axis] + t.dims[axis + 1:]
    rest_axes = t.axes[:axis] + t.axes[axis + 1:]
    return t, rest_dims[:axis] + i.dims + rest_dims[axis:], rest_axes[:axis] + i.axes + rest_axes[axis:], gathered


def _gather_is_cheaper(ctx: RuleContext, table: Layout, result: Layout, split: Axes) -> bool:
    """Whether gathering the table's looked-up dim moves fewer bytes per device than the psum a masked
    lookup needs: a small table looked up by many ids (T5's relative-position buckets by a [length,
    length] index).  An all_gather over n devices receives (n - 1) blocks of the table; an all-reduce
    of the result moves about 2 (n - 1) / n of it.  Decided only where ``@mesh(dims=...)`` gives every
    size: a table of unknown size (an embedding) is never gathered whole onto every device, which is
    what splitting its vocabulary is there to avoid."""
    if not all(d in ctx.declared or d == BROADCAST for d in (*table.dims, *result.dims)):
        return False
    local_table = ctx.elements(table.dims) // ctx.mesh.size(table.split_axes)
    local_result = ctx.elements(result.dims) // ctx.mesh.size(result.split_axes)
    return local_table * ctx.mesh.size(split) < 2 * local_result


#: jnp.take's modes, and what a missing or None mode means.
_MODES = ("fill", "clip", "wrap")
#: The mode of the take_along_axis meshify writes for ``x[rows, ids]`` (``_evaluate._per_row_pick``): as
#: JAX indexes (``mr.take_along_axis(mode="index")``, split or not); no user's mode.
INDEXING = "index"


def _lookup_mode(ctx: RuleContext, call: Call, mode_op, fill_op) -> tuple[str, Operand | None]:
    """The ``mode=`` of a take (a literal, default ``fill``) and its ``fill_value=`` operand, if any."""
    mode = "fill" if mode_op is None or _literal(mode_op) is None else _literal(mode_op)
    if mode == INDEXING and call.name == "jax.numpy.take_along_axis" and ctx.written_out(call.node):
        return mode, None
    if mode not in _MODES:
        raise ctx.error(UnsupportedError, mode_op.original, f"{call.name}(mode={ctx.code(mode_op.original)})",
                        "write the mode as a literal: mode=\"fill\", \"clip\" or \"wrap\"")
    if fill_op is not None and _literal(fill_op) is None:
        fill_op = None
    if fill_op is not None and not isinstance(fill_op.value, Static):
        raise ctx.error(UnsupportedError, fill_op.original, f"{call.name}(fill_value=...) with an array",
                        "fill with a Python scalar")
    return mode, fill_op


@op("jax.numpy.take")
def _take(ctx: RuleContext, call: Call):
    table, ids = call.arg(0, "a"), call.arg(1, "indices")
    axis = _literal(call.arg(2, "axis")) if call.arg(2, "axis") is not None else None
    if isinstance(table.value, Opaque) and isinstance(ids.value, Array) and (
            ids.value.layout.is_split or _one_dim(table.value)):
        return _take_whole(ctx, table, ids, axis)
    if isinstance(table.value, Array) and isinstance(ids.value, Static) and isinstance(axis, int) \
            and -table.value.layout.rank <= axis < table.value.layout.rank:
        return _take_one(ctx, call, table, axis % table.value.layout.rank)
    if isinstance(table.value, Array) and isinstance(ids.value, Opaque) and isinstance(axis, int):
        ids = _literal_ids(ctx, ids, call.node)
    if not isinstance(table.value, Array) or not isinstance(ids.value, Array):
        return unknown_call(ctx, call)
    if axis is None and _no_axis(call.arg(2, "axis")) and table.value.layout.rank == 1:
        axis = 0  # jnp.take without axis= reads the flattened table: a 1-D table's own dim
    if not isinstance(axis, int):
        if _no_axis(call.arg(2, "axis")):
            code = ctx.code(table.original)
            raise ctx.error(UnsupportedError, call.node, f"jnp.take without axis= reads {code!r} flattened "
                            f"(layout {table.value.layout.describe()}), whose dims meshify would have to merge",
                            f"write the axis the ids index (axis=0), or flatten first: jnp.take({code}.reshape(-1), "
                            "..., axis=0) with a hint naming the flat dim")
        raise ctx.error(UnsupportedError, call.node, "jnp.take needs a literal axis=", "write axis=0")
    out = call.arg(3, "out")
    if out is not None and _literal(out) is not None:
        raise ctx.error(UnsupportedError, out.original, "jnp.take(out=...)", "drop out=; JAX arrays are immutable")
    # unique_indices= and indices_are_sorted= are promises about ids: the masked local lookup keeps the
    # user's call where the table is whole, and needs neither where it is split.
    mode, fill = _lookup_mode(ctx, call, call.arg(4, "mode"), call.arg(7, "fill_value"))
    return lookup(ctx, table, ids, axis % table.value.layout.rank, call.node, mode, fill)


def _no_axis(axis: Operand | None) -> bool:
    """``axis=`` left out or written ``None``."""
    return axis is None or (isinstance(axis.value, Static) and axis.value.known and axis.value.literal is None)


def _take_one(ctx: RuleContext, call: Call, table: Operand, axis: int) -> Lowering:
    """``jnp.take(x, 2, axis=1)``: one entry along an unsplit dim, on each device's block as written (the dim
    gone, the others keeping their splits; a partial sum passes through: a pick is linear); along a split
    dim refused, naming it."""
    layout = table.value.layout  # type: ignore[union-attr]
    if layout.axes[axis]:
        from meshify.rewrite.rules._api import unsplit_fix

        raise ctx.error(UnsupportedError, call.node, f"jnp.take of one entry along split dim {layout.dims[axis]!r} "
                        f"of {ctx.code(table.original)!r} (layout {layout.describe()})", unsplit_fix(layout, axis))
    fill = call.arg(7, "fill_value")
    if fill is not None and _literal(fill) is not None:  # a fill value would be summed once per device
        layout = layout.with_partial(())
    kept = [i for i in range(layout.rank) if i != axis]
    result = Layout(tuple(layout.dims[i] for i in kept), tuple(layout.axes[i] for i in kept), layout.partial)
    origin = table.value.origin if layout.partial else ""  # type: ignore[union-attr]
    return Lowering(Array(result, origin), (Convert(table, layout, "jnp.take"),))


def _literal_ids(ctx: RuleContext, ids: Operand, node) -> Operand:
    """Ids of a literal shape (``jnp.array([0, 5, 7])``), whole on every device: an array whose dims are named
    after the ids (``ids?``), so the lookup's result has them where the table's dim was; ids of unknown
    dims are refused, asking for their dims."""
    shape = ids.value.shape  # type: ignore[union-attr]
    if shape is None:
        code = ctx.code(ids.original)
        raise ctx.error(UnsupportedError, ids.original, f"jnp.take by {code!r}, whose dims meshify cannot infer "
                        "(the result's dims follow the ids')", f"name the ids' dims first: ids: Tensor[\"k\"] = {code}")
    base = _expr_name(ids.original) or "ids"
    dims = tuple(f"{base}{i if len(shape) > 1 else ''}{INFERRED}" for i in range(len(shape)))
    return Operand(Array(Layout.replicated(dims)), ids.original, ids.node)


def _take_whole(ctx: RuleContext, table: Operand, ids: Operand, axis) -> Lowering:
    """``jnp.take`` of a table whose dims meshify cannot name (a module array, a literal), by split ids:
    the table is whole on every device, so each looks its block of ids up locally and the result is split
    like the ids, whatever the mode.  Only a table known to be 1-D gives the result's dims (the ids'
    dims, whole ids too); otherwise the error asks for the table's dims."""
    assert isinstance(table.value, Opaque) and isinstance(ids.value, Array), (table.value, ids.value)
    if not _one_dim(table.value) or axis not in (None, 0, -1):
        code = ctx.code(table.original)
        raise ctx.error(UnsupportedError, table.original,
                        f"jnp.take of {code!r}, whose dims meshify cannot infer, by {ctx.code(ids.original)!r} of "
                        f"layout {ids.value.layout.describe()} (the result's dims would follow the table's)",
                        f"name the table's dims first (table: Tensor[\"rows\", ...] = {code}), then jnp.take(table, ...)")
    i = ids.value.layout.with_partial(())
    return Lowering(Array(i), (Convert(ids, i, "lookup index"),), indices=(ids,))


def _one_dim(table: Opaque) -> bool:
    return table.shape is not None and len(table.shape) == 1


@op("jax.numpy.take_along_axis")
def _take_along_axis(ctx: RuleContext, call: Call):
    arr, idx = call.arg(0, "arr"), call.arg(1, "indices")
    axis = _literal(call.arg(2, "axis")) if call.arg(2, "axis") is not None else -1
    if not isinstance(arr.value, Array) or not isinstance(idx.value, Array):
        return unknown_call(ctx, call)
    if not isinstance(axis, int):
        raise ctx.error(UnsupportedError, call.node, "take_along_axis needs a literal axis", "write axis=-1")
    a, i = arr.value.layout, idx.value.layout
    if a.rank != i.rank:
        raise ctx.error(LayoutError, call.node, "take_along_axis needs index and array of the same rank",
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
    # Another dim split over an axis of the taken dim (both over 'model'): gathered over it, so that each
    # device takes along its block of the taken dim for every row (a masked lookup, summed over the axis).
    chosen = {k: tuple(x for x in ax if x not in split) for k, ax in chosen.items()}
    # A partial sum is reduced first over the axes the result is split on (like an elementwise op), and
    # wholly where out-of-range ids read a fill value (each device would add it once).
    mode, fill = _lookup_mode(ctx, call, call.arg(3, "mode"), call.arg(4, "fill_value"))
    partial = a.partial - {x for ax in chosen.values() for x in ax} if fill is None else frozenset()
    a_target = Layout(a.dims, tuple(split if d == axis else (() if a.dims[d] == BROADCAST else chosen[letters[d]])
                                    for d in range(a.rank)), partial)
    i_target = Layout(i.dims, tuple(() if d == axis or i.dims[d] == BROADCAST else chosen[letters[d]]
                                    for d in range(a.rank)))
    converts = (Convert(arr, a_target, "take_along_axis"), Convert(idx, i_target, "take_along_axis index"))
    dims = tuple(i.dims[d] if d == axis else (a.dims[d] if a.dims[d] != BROADCAST else i.dims[d])
                 for d in range(a.rank))
    axes = tuple(() if d == axis else chosen[letters[d]] for d in range(a.rank))
    if not split and mode == INDEXING:
        return Lowering(Array(Layout(dims, axes, partial)), converts,
                        "{mr}.take_along_axis({a}, {i}, axis={axis}, axis_name=(), mode=\"index\")",
                        (("a", Ref(0)), ("i", Ref(1)), ("axis", axis)), indices=(idx,))
    if not split:
        return Lowering(Array(Layout(dims, axes, partial)), converts, indices=(idx,))
    mode = "clip_wrapped" if mode == "clip" else mode  # take_along_axis wraps negative ids before clipping
    wrap = call.kwargs.get("wrap_negative_indices")
    if wrap is not None and _literal(wrap) not in (None, True):
        raise ctx.error(UnsupportedError, wrap.original, "take_along_axis(wrap_negative_indices=False) over a "
                        f"split dim {a.dims[axis]!r}", "drop it (negative ids then wrap), or map the dim to no mesh axis")
    template = "{mr}.take_along_axis({a}, {i}, axis={axis}, axis_name={axes}, mode={mode}%s)" % (
        ", fill_value={fill}" if fill is not None else "")
    fills = (("a", Ref(0)), ("i", Ref(1)), ("axis", axis), ("axes", MeshAxes(split)), ("mode", mode),
             *((("fill", fill.node),) if fill is not None else ()))
    note = (f"masked local take_along_axis over split '{a.dims[axis]}'; the result is a partial sum over "
            f"{axes_text(split)}")
    value = Array(Layout(dims, axes, partial | frozenset(split)), f"lookup in split '{a.dims[axis]}'")
    return Lowering(value, converts, template, fills, notes=(note,), indices=(idx,))


@op("jax.nn.one_hot", reads=("x", "num_classes", "dtype", "axis"))
def _one_hot(ctx: RuleContext, call: Call):
    x, depth = call.arg(0, "x"), call.arg(1, "num_classes")
    if not isinstance(x.value, Array) or depth is None:
        return unknown_call(ctx, call)
    name = depth.value.size_of if isinstance(depth.value, Static) else None
    if name is None and not isinstance(depth.value, Static):
        raise ctx.error(UnsupportedError, depth.original, "one_hot of a depth that is an array",
                        "pass a Python int: jax.nn.one_hot(labels, logits.shape[-1]) or a config's field")
    converts = (Convert(x, x.value.layout.with_partial(()), "one_hot"),)
    used = x.value.layout.split_axes
    if name is None:
        # a depth meshify cannot name (cfg.vocab, 10): an inferred dim after it, whole on every device; it
        # lines up with the dim it meets (a split vocabulary takes its block of it)
        tail = ctx.code(depth.original).rsplit(".", 1)[-1]
        name = (tail if tail.isidentifier() else "classes") + INFERRED
    axes = ctx.rules.axes(name) if not name.endswith(INFERRED) else ()
    if set(axes) & used:
        axes = ()
    axis = call.kwargs.get("axis")
    at = x.value.layout.rank  # where the classes go: axis=-1 (the default) appends them
    if axis is not None:
        given = _literal(axis)
        if not isinstance(given, int) or isinstance(given, bool) or not -x.value.layout.rank - 1 <= given \
                <= x.value.layout.rank:
            raise ctx.error(UnsupportedError, axis.original, f"one_hot(axis={ctx.code(axis.original)})",
                            f"pass a literal int in [{-x.value.layout.rank - 1}, {x.value.layout.rank}] (where the "
                            "classes go), or one-hot the last dim (axis=-1)")
        at = given % (x.value.layout.rank + 1)
    dims = (*x.value.dims[:at], name, *x.value.dims[at:])
    layout = Layout(dims, (*x.value.layout.axes[:at], axes, *x.value.layout.axes[at:]))
    if not axes:
        return Lowering(Array(layout), converts, indices=(x,))
    dtype = call.kwargs.get("dtype")
    template = "{mr}.one_hot({x}, {n}, axis_name={axes}" + (", dtype={dtype}" if dtype is not None else "") + (
        f", axis={at})" if at != x.value.layout.rank else ")")
    fills = (("x", Ref(0)), ("n", depth.node), ("axes", MeshAxes(axes)),
             *((("dtype", dtype.node),) if dtype is not None else ()))
    note = f"local one_hot: this device's block of '{name}', split over {axes_text(axes)}"
    return Lowering(Array(layout), converts, template, fills, notes=(note,), indices=(x,))


# -- diagonals ------------------------------------------------------------------------------------------


@op("jax.numpy.diagonal", method="diagonal", reads=("a", "offset", "axis1", "axis2"))
def _diagonal(ctx: RuleContext, call: Call):
    return _diagonal_rule(ctx, call, "diagonal")


@op("jax.numpy.trace", method="trace", reads=("a", "offset", "axis1", "axis2", "dtype"))
def _trace(ctx: RuleContext, call: Call):
    return _diagonal_rule(ctx, call, "trace")


@op("jax.numpy.diag", reads=("v", "k"))
def _diag(ctx: RuleContext, call: Call):
    v = call.arg(0, "v")
    if not isinstance(v.value, Array):
        return unknown_call(ctx, call)
    layout = v.value.layout
    if layout.rank == 2:  # the diagonal of a matrix
        return _diagonal_rule(ctx, call, "diag")
    if layout.rank != 1:
        raise ctx.error(LayoutError, call.node, f"jnp.diag of {ctx.code(v.original)!r} with {layout.rank} dims",
                        "pass a vector (a diagonal matrix is built) or a matrix (its diagonal is read)")
    if layout.is_split:  # a diagonal matrix built from a split vector: each device's rows need every column
        raise ctx.error(UnsupportedError, v.original, f"jnp.diag builds a matrix from {ctx.code(v.original)!r} of "
                        f"layout {layout.describe()}, split", f"map {layout.dims[0]!r} to no mesh axis "
                        f"(rules={{{layout.dims[0]!r}: None}}), or scale by the vector instead (x * v[None, :])")
    k = _literal(call.params.get("k")) if call.params.get("k") is not None else 0
    name = layout.dims[0] if k == 0 else "diag" + INFERRED
    return Lowering(Array(Layout((name, name), ((), ()), layout.partial)), (Convert(v, layout, "jnp.diag"),))


def _diagonal_rule(ctx: RuleContext, call: Call, kind: str) -> Lowering:
    """``jnp.diagonal(x, offset, axis1, axis2)``, ``jnp.trace`` (its sum) and ``jnp.diag`` of a matrix.  Where
    neither dim of the pair is split each device takes its own diagonal (the other dims keep their splits;
    linear, so a partial sum stays one).  Where one is split and the other is a dim of the same name (a
    batch-by-batch similarity matrix, its rows split), the diagonal's entries of a device's rows lie in its
    own square block: ``mr.diagonal_block`` cuts the whole dim to it, with no communication, and the
    diagonal comes out split as the rows were (a trace: a partial sum over those axes)."""
    x = call.receiver if call.receiver is not None else call.arg(0, "v" if kind == "diag" else "a")
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = x.value.layout
    short = "jnp.diag" if kind == "diag" else f"jnp.{kind}"
    ints = []
    for param, default in (("k" if kind == "diag" else "offset", 0), ("axis1", 0), ("axis2", 1)):
        o = call.params.get(param)
        value = default if o is None else _literal(o)
        if not isinstance(value, int) or isinstance(value, bool):
            raise ctx.error(UnsupportedError, o.original, f"{short}({param}={ctx.code(o.original)}): meshify reads "
                            f"{param}= as an int known when rewriting", f"write {param}= as an int literal")
        ints.append(value)
    offset, a1, a2 = ints
    if layout.rank < 2 or not (-layout.rank <= a1 < layout.rank and -layout.rank <= a2 < layout.rank) \
            or a1 % layout.rank == a2 % layout.rank:
        raise ctx.error(LayoutError, call.node, f"{short} of {ctx.code(x.original)!r} ({layout.describe()}) with "
                        f"axis1={a1}, axis2={a2}", "name two different dims of the array")
    a1, a2 = a1 % layout.rank, a2 % layout.rank
    pair = (layout.dims[a1], layout.dims[a2])
    rest = [d for d in range(layout.rank) if d not in (a1, a2)]
    split = [d for d in (a1, a2) if layout.axes[d]]
    square = pair[0] == pair[1] and pair[0] != BROADCAST and not pair[0].endswith(INFERRED)
    name = pair[0] if square and offset == 0 else "diagonal" + INFERRED
    if split and not square and BROADCAST not in pair and any(d.endswith(INFERRED) for d in pair):
        # a dim of a size meshify could not read beside a split dim (rearranged rows against split columns):
        # taken as square, mr.diagonal_block checks the sizes when tracing; named as the split dim
        square, name = True, layout.dims[split[0]]
    wrap = None
    diagonal_axes: Axes = ()
    if split:
        where = call.node
        if not square:
            raise ctx.error(UnsupportedError, where, f"{short} of dims {pair[0]!r} and {pair[1]!r} of "
                            f"{ctx.code(x.original)!r} ({layout.describe()}): a split dim's diagonal is taken only "
                            "against a dim of the same name (same size)", _unsplit_fix(layout, split))
        if offset != 0:
            raise ctx.error(UnsupportedError, where, f"{short} with offset {offset} of split {pair[0]!r} "
                            f"({layout.describe()}): the entries off the main diagonal cross the devices' blocks",
                            "take the main diagonal (offset 0), or " + _unsplit_fix(layout, split))
        if len(split) == 2:  # (one name over two mesh axes cannot be: both split alike is no square block)
            raise ctx.error(UnsupportedError, where, f"{short} of {ctx.code(x.original)!r} ({layout.describe()}) "
                            f"with both {pair[0]!r} dims split", _unsplit_fix(layout, split[1:]))
        diagonal_axes = layout.axes[split[0]]
        wrap = ("{mr}.diagonal_block({x}, " + f"{a1}, {a2}, split={split[0]}, axis_name="
                f"{_axes_code(diagonal_axes)})")
    convert = Convert(x, layout, f"{short} (its square block of rows and columns)" if wrap else short, wrap=wrap)
    dims = tuple(layout.dims[d] for d in rest)
    axes = tuple(layout.axes[d] for d in rest)
    if kind != "trace":
        notes = ((f"the diagonal of each device's square block of split {pair[0]!r} (its rows' entries), split as "
                  "they are: no communication"),) if diagonal_axes else ()
        return Lowering(Array(Layout((*dims, name), (*axes, diagonal_axes), layout.partial), x.value.origin),
                        (convert,), notes=notes)
    if not diagonal_axes:
        return Lowering(Array(Layout(dims, axes, layout.partial), x.value.origin), (convert,))
    return Lowering(Array(Layout(dims, axes, layout.partial | frozenset(diagonal_axes)),
                          f"reduced {pair[0]!r} split"), (convert,), accumulate=("dtype", (x,)),
                    notes=((f"the trace of each device's square block of split {pair[0]!r}: a partial sum over "
                            f"{axes_text(diagonal_axes)}"),))


def _unsplit_fix(layout: Layout, dims: list[int]) -> str:
    names = list(dict.fromkeys(layout.dims[d] for d in dims))
    return (f"map {', '.join(map(repr, names))} to no mesh axis (rules={{{', '.join(f'{n!r}: None' for n in names)}}}),"
            " or compute it outside the @mesh function")


def _bind_first(code: str, name: str) -> str:
    """The fix naming the dims of an expression meshify cannot read: a hinted name bound to it first (a plain
    name is annotated where it is bound)."""
    if code.isidentifier():
        return f"name its dims where it is made: {code}: Tensor[\"k\"] = ..."
    return f"bind it to a name with a hint first, {name}: Tensor[\"k\"] = {code}, and use {name}"
