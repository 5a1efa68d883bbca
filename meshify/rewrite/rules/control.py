"""Loops over stacked layers (``jax.lax.scan``, ``jax.lax.fori_loop``) and branches on a traced
test (``jax.lax.cond``, ``jax.lax.switch``): rules that say which functions the call runs, as a
:class:`~meshify.rewrite.rules._api.Loop` or :class:`~meshify.rewrite.rules._api.Branches`; the
interpreter walks them (:mod:`meshify.rewrite._bodies`).

The loop body (a module helper, a nested def or a lambda) is rewritten once for the layouts
of one iteration: the carry as it comes in, and each ``xs`` leaf without its leading
(stacked) dim, which must not be split.  The carry must leave the body in the layout it
came in (a carry the body returns in another layout of its dims enters the loop in that
layout); otherwise the error names it.  Collectives inside count once per iteration
(the leading dim's size) in ``explain``.

Branches: the test is made whole first (every device must take the same branch), each branch
(a lambda, a nested def, a module helper) is walked like a loop body for the operands, and every
branch's result is converted inside the branch to one layout (the splits of the branch with fewest
pending partial sums; partial sums completed in the branch, where their dtypes can be named).  The
generated code keeps the ``cond``/``switch`` call with the rewritten branches.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import libcst as cst

from meshify.annotate._types import BROADCAST, INFERRED, Layout, hint_dims
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._collectives import axes_text
from meshify.rewrite._templates import item_node
from meshify.rewrite._values import Array, Operand, Static, StructValue, TupleValue, Value
from meshify.rewrite.rules._api import (
    BODY_OPS,
    At,
    Body,
    Branches,
    Call,
    Convert,
    Emitted,
    Loop,
    Lowering,
    MeshAxes,
    Ref,
    RuleContext,
    Template,
    _arrays_in,
    op,
    unknown_call,
)

__all__: list[str] = []


def _axes_code(axes: tuple[str, ...]) -> str:
    """Mesh axes as a rules value is written: ``"batch"``, ``("data", "model")``."""
    return f'"{axes[0]}"' if len(axes) == 1 else "(" + ", ".join(f'"{a}"' for a in axes) + ")"


def _drop_leading(ctx: RuleContext, value: Value, where) -> tuple[Value, str | None]:
    """One iteration's slice of ``xs``: every array leaf without its leading dim."""
    if isinstance(value, Array):
        layout = value.layout
        if layout.rank == 0:
            raise ctx.error(LayoutError, where, "scan over a scalar", "scan over an array with a leading dim")
        if layout.axes[0] and layout.dims[0].endswith(INFERRED) and layout.rank > 1:
            # x.reshape(n, B // n, ...) of a split batch: the reshape put the split on the leading dim
            raise ctx.error(UnsupportedError, where,
                            f"scan over dim {layout.dims[0]!r}, which is split over {layout.axes[0]}: a reshape "
                            f"gave it the split of the dim it was cut from (its major factor)",
                            f"cut the rows so that each step takes every n-th row (each device's block holds some "
                            f"rows of every step): mb: Tensor[\"micro\", \"micro_batch\", ...] = "
                            f"jnp.swapaxes(x.reshape(-1, n, ...), 0, 1) with rules={{\"micro_batch\": "
                            f"{_axes_code(layout.axes[0])}}}; the scan runs its iterations in order on every device, "
                            "so each must hold every step")
        if layout.axes[0]:
            raise ctx.error(UnsupportedError, where,
                            f"scan over dim {layout.dims[0]!r}, which is split over {layout.axes[0]}",
                            f"map {layout.dims[0]!r} to no mesh axis (rules={{{layout.dims[0]!r}: None}}): the "
                            "scan runs its iterations in order on every device, so each must hold every step "
                            "(every time step, every layer)")
        return Array(Layout(layout.dims[1:], layout.axes[1:], layout.partial), value.origin), layout.dims[0]
    if isinstance(value, StructValue):
        fields, dim = [], None
        for name, field in value.fields:
            sliced, d = _drop_leading(ctx, field, where)
            fields.append((name, sliced))
            dim = dim or d
        return StructValue(value.cls, tuple(fields), value.kind), dim
    if isinstance(value, TupleValue):
        items, dim = [], None
        for item in value.items:
            sliced, d = _drop_leading(ctx, item, where)
            items.append(sliced)
            dim = dim or d
        return TupleValue(tuple(items)), dim
    return value, None


BODY_OPS.update({"jax.lax.scan", "jax.lax.fori_loop"})


@op("jax.lax.scan")
def _scan(ctx: RuleContext, call: Call) -> Lowering:
    f, init, xs = call.arg(0, "f"), call.arg(1, "init"), call.arg(2, "xs")
    if f is None or init is None:
        return unknown_call(ctx, call)
    x_value: Value
    trips: int | str | None
    if "length" in call.kwargs and (xs is None or isinstance(xs.value, Static)):
        length = call.kwargs["length"].value
        trips = length.literal if isinstance(length, Static) and isinstance(length.literal, int) else None
        x_value, dim = Static(), None
    else:
        x_value, dim = _drop_leading(ctx, xs.value, xs.original) if xs is not None else (Static(), None)
        trips = dim
    loop = Loop(_body(call, f), (init.value, x_value), 0, init, trips, stacked=dim or "scan", unroll=_unroll(call),
                sources=(init.original, xs.original if xs is not None else None))
    return Lowering(None, walks=loop)


BODY_OPS.add("jax.lax.associative_scan")


@op("jax.lax.associative_scan", reads=("fn", "elems", "reverse", "axis"))
def _associative_scan(ctx: RuleContext, call: Call) -> Lowering:
    """``jax.lax.associative_scan(fn, elems, axis=k)`` (S5's and Mamba's parallel recurrences) along a dim
    that is whole on every device: each device scans its own block of the other dims.  ``fn`` is walked
    with two elements of ``elems``' layouts and must return that layout (a carry's rule: a partial sum it
    forms is completed inside); a partial sum in ``elems`` is refused.  Along a split dim, jax.lax's cumulative
    op where the combine is one (``jnp.add``, :func:`_elementwise_scan`; a partial sum completed first), else
    ``mr.associative_scan``: each device scans its block and combines the totals of the blocks before it.  A
    matrix product (``jnp.matmul``, ``lambda a, b: a @ b``) of one array's last two dims is not walked (its two
    operands' matrix dims have other names): :func:`_matmul_scan`."""
    fn, elems = call.params.get("fn"), call.params.get("elems")
    if fn is None or elems is None:
        return unknown_call(ctx, call)
    axis_op = call.params.get("axis")
    axis = axis_op.value.literal if axis_op is not None and isinstance(axis_op.value, Static) \
        and axis_op.value.known else 0 if axis_op is None else None
    if type(axis) is not int:
        raise ctx.error(UnsupportedError, axis_op.original if axis_op is not None else call.node,
                        f"associative_scan(axis={ctx.code(axis_op.original) if axis_op else '?'}) is not a literal",
                        "write the axis as an int literal (axis=1)")
    scan = _elementwise_scan(ctx, call, fn, elems, axis)
    if scan is not None:
        return scan
    if _matmul_combine(ctx, fn.original):
        return _matmul_scan(ctx, call, fn, elems, axis)
    elementwise = isinstance(fn.original, cst.Name | cst.Attribute) and \
        bool(ctx.qualified_names(fn.original) & _ELEMENTWISE_COMBINE)
    if elementwise and isinstance(elems.value, Array) and elems.value.layout.partial \
            and -elems.value.layout.rank <= axis < elems.value.layout.rank:
        # a partial sum scanned along a whole dim: completed first (psum), then scanned on each device's block
        target = elems.value.layout.with_partial(())
        return Lowering(Array(target), (Convert(elems, target, "associative_scan"),))
    splits = set()
    leaves = list(_arrays_in(elems.value, ctx.code(elems.original), elems.original))
    for path, leaf in leaves:
        layout = leaf.layout
        if not -layout.rank <= axis < layout.rank:
            raise ctx.error(LayoutError, elems.original, f"associative_scan(axis={axis}) of {path!r} of dims "
                            f"{list(layout.dims)}", f"use an axis from {-layout.rank} to {layout.rank - 1}")
        if layout.partial:
            raise ctx.error(UnsupportedError, elems.original, f"associative_scan of {path!r}, a partial sum over "
                            f"{axes_text(tuple(sorted(layout.partial)))}", f"complete it first: name it with a hint "
                            f"(v: Tensor[{hint_dims(layout.dims)}] = ...) before the scan")
        splits.add(layout.axes[axis % layout.rank])
    aligned = None
    if len(splits) > 1:
        aligned = _aligned(ctx, elems, leaves, axis, splits)
        elems, leaves, splits = aligned.elems, aligned.leaves, {aligned.split}
    split = splits.pop() if splits else ()
    if elementwise and not split:
        return Lowering(elems.value)  # jax.lax.associative_scan(jnp.add, x, axis=1): elementwise, on each block
    loop = None if elementwise else Loop(_body(call, fn), (elems.value, elems.value), 0, elems, None,
                                         sources=(elems.original, elems.original))
    if not split:
        return Lowering(None, walks=loop)
    scan = _scan_across(leaves, axis, split, elems.value if loop is None else None, loop,
                        aligned.dim if aligned else None)
    if aligned is None:
        return scan
    return replace(scan, converts=aligned.converts, replace=((At(call.position(elems)), aligned.part),))


@dataclass(frozen=True, slots=True)
class _Aligned:
    """An associative_scan's ``elems`` with its leaves split alike along the scanned dim (see :func:`_aligned`)."""

    elems: Operand  # its value the converted leaves' (its node the user's: ``part`` replaces it in the call)
    leaves: list  # (path, Array) of each leaf, converted
    split: tuple[str, ...]  # the mesh axes splitting the scanned dim
    dim: str  # the scanned dim's name, as a split leaf has it
    converts: tuple[Convert, ...]
    part: object  # the tuple in place of ``elems`` (a Ref where a leaf is converted), a Lowering's ``replace``


def _aligned(ctx: RuleContext, elems: Operand, leaves: list[tuple[str, Array]], axis: int, splits: set) -> _Aligned:
    """The leaves of an associative_scan's ``elems`` split alike along the scanned dim: a leaf whole along it (a
    ``jnp.repeat``ed or broadcast decay beside split inputs, sequence parallel) converted to the block of it each
    device holds, a dim of it split over those mesh axes made whole first; leaves split over two different mesh
    axes along it, or a leaf whole along it in a struct, refused."""
    split = _one_split(ctx, elems, leaves, axis, splits)
    dim = next(v.layout.dims[axis % v.layout.rank] for _, v in leaves if v.layout.axes[axis % v.layout.rank])
    if not isinstance(elems.value, TupleValue) or not isinstance(elems.original, cst.Name | cst.Tuple | cst.List):
        path, _ = next((p, v) for p, v in leaves if not v.layout.axes[axis % v.layout.rank])
        raise ctx.error(UnsupportedError, elems.original, f"associative_scan of {ctx.code(elems.original)!r}, whose "
                        f"leaf {path!r} is whole along the scanned dim where others are split over "
                        f"{axes_text(split)}: meshify slices such a leaf to each device's block only in a tuple",
                        "pass a tuple (or a name bound to one) of arrays as elems: elems = (a, b)")
    converts: list[Convert] = []
    new: list[tuple[str, Array]] = []

    def rebuild(value: Value, original: cst.BaseExpression, node: cst.BaseExpression, path: str):
        if isinstance(value, TupleValue):
            literal = isinstance(original, cst.Tuple | cst.List) and len(original.elements) == len(value.items)
            parts = [rebuild(v, original.elements[i].value if literal else item_node(original, i),
                             node.elements[i].value if literal else item_node(node, i),
                             ctx.code(original.elements[i].value) if literal else f"{path}[{i}]")
                     for i, v in enumerate(value.items)]
            items = tuple(p for p, _ in parts)
            kind = value.kind if not literal else "list" if isinstance(original, cst.List) else "tuple"
            return (Template("list({items})", (("items", items),)) if kind == "list" else items), \
                value.of(v for _, v in parts)
        if not isinstance(value, Array):
            return node, value
        layout = value.layout
        k = axis % layout.rank
        if layout.axes[k] == split:
            new.append((path, value))
            return node, value
        axes = tuple(split if i == k else () if set(a) & set(split) else a for i, a in enumerate(layout.axes))
        target = Layout(layout.dims, axes)
        converts.append(Convert(Operand(value, elems.original, node), target, f"the associative_scan along split "
                                f"{dim!r}, of which {path!r} is whole,"))
        new.append((path, Array(target, value.origin)))
        return Ref(len(converts) - 1), Array(target, value.origin)

    part, value = rebuild(elems.value, elems.original, elems.node, ctx.code(elems.original))
    return _Aligned(Operand(value, elems.original, elems.node), new, split, dim, tuple(converts), part)


def _one_split(ctx: RuleContext, elems: Operand, leaves: list[tuple[str, Array]], axis: int, splits: set):
    """The one way leaves of ``elems`` are split along the scanned dim (others whole); two ways are refused."""
    split = [s for s in splits if s]
    if len(split) == 1:
        return split[0]
    path, leaf = next((p, v) for p, v in leaves if v.layout.axes[axis % v.layout.rank])
    dim = leaf.layout.dims[axis % leaf.layout.rank]
    raise ctx.error(UnsupportedError, elems.original, f"associative_scan along {dim!r} of {path!r}, split "
                    f"over {axes_text(leaf.layout.axes[axis % leaf.layout.rank])}, where other leaves of "
                    f"{ctx.code(elems.original)!r} are split over other mesh axes along the scanned dim",
                    "give every leaf the same dims hint (one rule for the scanned dim)")


def _scan_across(leaves: list[tuple[str, Array]], axis: int, split: tuple[str, ...], value: Value | None,
                 loop: Loop | None = None, dim: str | None = None) -> Lowering:
    """``mr.associative_scan`` along a dim split over ``split`` (``dim``: its name, else the first leaf's): each
    device scans its block, then combines the totals of the blocks before it (one all-gather of each leaf's
    block total)."""
    dim = dim or leaves[0][1].layout.dims[axis % leaves[0][1].layout.rank]
    emitted = tuple(Emitted("scan_totals", split, Layout(
        tuple(BROADCAST if i == axis % leaf.layout.rank else d for i, d in enumerate(leaf.layout.dims)),
        tuple(() if i == axis % leaf.layout.rank else a for i, a in enumerate(leaf.layout.axes))), dim,
        f"associative_scan over {axes_text(split)}: each block's total of {path!r} gathered (all_gather), the "
        f"earlier ones folded with the combine, along split {dim!r}") for path, leaf in leaves)
    return Lowering(value, walks=loop, callee="associative_scan", keywords=(("axis_name", MeshAxes(split)),),
                    emitted=emitted)


#: Functions whose two operands a combine multiplies as matrices (``jnp.matmul``, ``a @ b``).
_MATMUL = frozenset({"jax.numpy.matmul", "operator.matmul"})


def _matmul_combine(ctx: RuleContext, node: cst.CSTNode) -> bool:
    """Whether an associative_scan's combine is a matrix product of its two operands, in either order:
    ``jnp.matmul``, ``lambda a, b: a @ b`` (or ``jnp.matmul(b, a)``), or a def returning one (nested or the module's)."""
    if isinstance(node, cst.Name | cst.Attribute) and ctx.qualified_names(node) & _MATMUL:
        return True
    if isinstance(node, cst.Lambda):
        params, body = node.params, node.body
    elif isinstance(node, cst.Name) and (found := ctx.def_named(node.value)) is not None:
        params, statements = found.params, list(found.body.body)
        if statements and _docstring(statements[0]):
            statements = statements[1:]
        if found.decorators or len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine) \
                or len(statements[0].body) != 1 or not isinstance(statements[0].body[0], cst.Return) \
                or statements[0].body[0].value is None:
            return False
        body = statements[0].body[0].value
    else:
        return False
    if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.kwonly_params or params.star_kwarg \
            or params.posonly_params or len(params.params) != 2 or any(p.default for p in params.params):
        return False
    names = {p.name.value for p in params.params}
    if isinstance(body, cst.BinaryOperation) and isinstance(body.operator, cst.MatrixMultiply):
        operands = [body.left, body.right]
    elif isinstance(body, cst.Call) and ctx.qualified_names(body.func) & _MATMUL and len(body.args) == 2 \
            and not any(a.keyword or a.star for a in body.args):
        operands = [a.value for a in body.args]
    else:
        return False
    return all(isinstance(o, cst.Name) for o in operands) and {o.value for o in operands} == names


def _docstring(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
        and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.SimpleString)


def _matmul_scan(ctx: RuleContext, call: Call, fn: Operand, elems: Operand, axis: int) -> Lowering:
    """``jax.lax.associative_scan(jnp.matmul, m, axis=k)`` of one array of matrices (its last two dims), a
    product along dim ``k`` (a linear recurrence's transitions, a chain of rotations): the combine is local where
    the matrix dims, which it contracts, are whole; the other dims may be split, the scanned one included
    (``mr.associative_scan``: the product of the blocks before a device's, on the left of its scan; the combine is
    associative, not commutative, and the runtime keeps its order)."""
    what = ctx.code(fn.original)
    if not isinstance(elems.value, Array):
        raise ctx.error(UnsupportedError, elems.original, f"associative_scan with the matrix-product combine "
                        f"{what!r} of {ctx.code(elems.original)!r}, which is not one array",
                        "scan one array of matrices (its last two dims), or write the combine on the pytree's "
                        "leaves as a def or lambda")
    layout = elems.value.layout
    name = ctx.code(elems.original)
    if not -layout.rank <= axis < layout.rank or axis % layout.rank >= layout.rank - 2:
        raise ctx.error(LayoutError, elems.original, f"associative_scan(axis={axis}) with the matrix-product "
                        f"combine {what!r} of {name!r} of dims {list(layout.dims)}: its last two dims are the "
                        "matrices", f"scan along a dim before them (axis from 0 to {layout.rank - 3})")
    if layout.partial:
        raise ctx.error(UnsupportedError, elems.original, f"associative_scan of {name!r}, a partial sum over "
                        f"{axes_text(tuple(sorted(layout.partial)))}", f"complete it first: name it with a hint "
                        f"(v: Tensor[{hint_dims(layout.dims)}] = ...) before the scan")
    for i in (layout.rank - 2, layout.rank - 1):
        if layout.axes[i]:
            dim = layout.dims[i]
            raise ctx.error(UnsupportedError, elems.original, f"associative_scan with the matrix-product combine "
                            f"{what!r} contracts dim {dim!r} of {name!r}, split over {axes_text(layout.axes[i])}",
                            f"map {dim!r} to no mesh axis (rules={{{dim!r}: None}}); the other dims, the scanned "
                            "one included, may be split")
    split = layout.axes[axis % layout.rank]
    if not split:
        return Lowering(elems.value)  # on each device's block of the other dims, as written
    return _scan_across([(name, elems.value)], axis, split, elems.value)


#: Combining functions of associative_scan that work elementwise (a prefix sum, product, running max).
_ELEMENTWISE_COMBINE = frozenset({
    *(f"jax.numpy.{n}" for n in ("add", "multiply", "maximum", "minimum", "logaddexp", "fmax", "fmin")),
    *(f"jax.lax.{n}" for n in ("add", "mul", "max", "min")), "operator.add", "operator.mul"})

#: Those combining functions whose scan is one of jax.lax's cumulative ops (fmax and fmin skip a NaN, which
#: cummax and cummin pass on: not among them).
_CUMULATIVE_OF = {
    **dict.fromkeys(("jax.numpy.add", "jax.lax.add", "operator.add"), "cumsum"),
    **dict.fromkeys(("jax.numpy.multiply", "jax.lax.mul", "operator.mul"), "cumprod"),
    **dict.fromkeys(("jax.numpy.maximum", "jax.lax.max"), "cummax"),
    **dict.fromkeys(("jax.numpy.minimum", "jax.lax.min"), "cummin"),
    "jax.numpy.logaddexp": "cumlogsumexp"}


def _elementwise_scan(ctx: RuleContext, call: Call, fn: Operand, elems: Operand, axis: int) -> Lowering | None:
    """``jax.lax.associative_scan(jnp.add, x, axis=k)`` of one array along a split dim (a linear attention's
    running sum of key-value products over a split sequence): ``jax.lax.cumsum(x, k, reverse=...)`` as
    ``mr.cumulative`` runs it (the local scan combined with the earlier blocks' totals), likewise for a product,
    running max, min and logaddexp.  None where the scanned dim is whole or the scan is not one of those."""
    if not isinstance(elems.value, Array) or not isinstance(fn.original, cst.Name | cst.Attribute):
        return None
    layout = elems.value.layout
    if not -layout.rank <= axis < layout.rank or not layout.axes[axis % layout.rank]:
        return None
    kinds = {_CUMULATIVE_OF[q] for q in ctx.qualified_names(fn.original) if q in _CUMULATIVE_OF}
    if len(kinds) != 1:
        return None
    from meshify.rewrite.rules.statistics import _cumulative

    return _cumulative(ctx, call, elems, layout, axis % layout.rank, kinds.pop())


def _unroll(call: Call) -> int | bool:
    """``unroll=`` as a literal (an int, or True: every iteration), else 1 (``explain`` then counts one copy)."""
    given = call.kwargs.get("unroll")
    value = given.value if given is not None else None
    if isinstance(value, Static) and value.known and isinstance(value.literal, bool | int) \
            and value.literal is not False and value.literal >= 1:
        return value.literal
    return 1


@op("jax.lax.fori_loop")
def _fori_loop(ctx: RuleContext, call: Call) -> Lowering:
    lower, upper, f, init = (call.arg(i, k) for i, k in enumerate(["lower", "upper", "body_fun", "init_val"]))
    if init is None or f is None:
        return unknown_call(ctx, call)
    lo, hi = lower.value, upper.value
    trips: int | str | None = None
    if isinstance(lo, Static) and isinstance(hi, Static):
        if lo.known and hi.known and isinstance(lo.literal, int) and isinstance(hi.literal, int):
            trips = hi.literal - lo.literal
        elif lo.known and lo.literal == 0:
            trips = hi.size_of
    return Lowering(None, walks=Loop(_body(call, f), (Static(), init.value), 1, init, trips, unroll=_unroll(call),
                                     sources=(None, init.original)))


BODY_OPS.add("jax.lax.while_loop")


@op("jax.lax.while_loop", reads=("cond_fun", "body_fun", "init_val"))
def _while_loop(ctx: RuleContext, call: Call) -> Lowering:
    """``jax.lax.while_loop(cond, body, init)``: the body walked as a fori_loop's (the carry to a fixpoint),
    then the condition with that carry; it must come out whole on every device (a scalar; a partial sum is
    completed inside the condition), so every device runs the same number of iterations."""
    cond, f, init = call.params.get("cond_fun"), call.params.get("body_fun"), call.params.get("init_val")
    if cond is None or f is None or init is None:
        return unknown_call(ctx, call)
    return Lowering(None, walks=Loop(_body(call, f), (init.value,), 0, init, None, cond=_body(call, cond),
                                     sources=(init.original,)))


def _body(call: Call, fn: Operand) -> Body:
    """``fn``, a function argument of ``call``, walked and put back where it is written."""
    return Body(fn, At(call.position(fn)))


# -- branches: jax.lax.cond and jax.lax.switch ------------------------------------------------------

BODY_OPS.update({"jax.lax.cond", "jax.lax.switch"})


@op("jax.lax.cond", reads=("pred", "true_fun", "false_fun", "operands"))
def _cond(ctx: RuleContext, call: Call) -> Lowering:
    pred, branches = call.params.get("pred"), [call.params.get("true_fun"), call.params.get("false_fun")]
    if pred is None or None in branches:
        return unknown_call(ctx, call)
    return _branches(ctx, call, pred, tuple(_body(call, b) for b in branches))


@op("jax.lax.switch", reads=("index", "branches", "operands"))
def _switch(ctx: RuleContext, call: Call) -> Lowering:
    index, listed = call.params.get("index"), call.params.get("branches")
    if index is None or listed is None:
        return unknown_call(ctx, call)
    node = listed.original
    if not isinstance(node, cst.List | cst.Tuple) or not node.elements:
        raise ctx.error(UnsupportedError, node, f"switch over the branches {ctx.code(node)!r}, which meshify cannot "
                        "see one by one", "write the branches as a list literal: [f, g, lambda x: ...]")
    at = call.position(listed)
    return _branches(ctx, call, index, tuple(Body(Operand(Static(), e.value, e.value), At(at, j))
                                             for j, e in enumerate(node.elements)))


def _branches(ctx: RuleContext, call: Call, test: Operand, bodies: tuple[Body, ...]) -> Lowering:
    """``cond``/``switch``: the test made whole (every device must take the same branch), each branch
    walked for the operands, and every branch's result converted, inside the branch, to one layout."""
    walks = Branches(bodies, tuple(call.params.get("operands", ())))
    if not isinstance(test.value, Array):
        return Lowering(None, walks=walks)
    what = "predicate" if call.short == "cond" else "index"
    if test.value.layout.rank:
        raise ctx.error(LayoutError, test.original, f"the {call.short} {what} {ctx.code(test.original)!r} has dims "
                        f"{list(test.value.layout.dims)}, not a scalar",
                        "reduce it to a scalar first (jnp.any(...), jnp.all(...), or index one element)")
    whole = Convert(test, Layout.replicated(()), f"the {call.short} {what} (every device must take the same branch)")
    return Lowering(None, converts=(whole,), walks=walks)
