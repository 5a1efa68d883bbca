"""The all-reduces of cotangents in the backward pass of a loss JAX differentiates inside
the @mesh function (``jax.grad(loss)(params, x)``), for ``explain`` and ``verify``'s count.

Where an op meets operands that vary over different mesh axes, JAX broadcasts (``pvary``) the others
to the axes one varies over; the backward pass transposes that into a psum of the broadcast operand's
cotangent over those axes.  A normalised activation whole over 'model' meeting a column-parallel
weight split over 'model' is one: its cotangent, a ``[batch/data, d]`` block, is summed over 'model'.
Only values with a cotangent count: those computed from a differentiated argument.  A parameter
meeting activations split over 'data' is one too: its psum is data parallelism's gradient all-reduce;
the cotangents of one value's uses are summed first (XLA reassociates their all-reduces into one).

While walking a differentiated function, a rewriter holds ``tangent``: the names of its scope whose
value has a cotangent, read off the code flow-insensitively (a name bound twice counts as its bindings
together) before the walk (:func:`enter`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import libcst as cst

from meshify.annotate._types import BROADCAST, Layout
from meshify.rewrite._values import Array

__all__ = ["BACKWARD", "Gather", "Side", "enter", "key", "note", "reads", "seeded", "seeded_params", "side"]

#: What the reason of each such psum says (the call that differentiates comments them).
BACKWARD = "(backward)"

#: Attributes that read no data of an array (its shape, its dtype): no cotangent flows through them.
_NO_DATA = frozenset({"shape", "dtype", "ndim", "size"})
#: Calls whose result has no cotangent from their array arguments.
_NO_TANGENT = frozenset({"stop_gradient", "zeros_like", "ones_like", "empty_like", "full_like", "shape",
                         "argmax", "argmin", "argsort", "sign", "floor", "ceil", "round", "isnan", "isfinite"})


class _Reads(cst.CSTVisitor):
    """The names an expression reads as data (see :func:`reads`)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if node.attr.value not in _NO_DATA:  # (the attribute's own name is no name read)
            node.value.visit(self)
        return False

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if name in _NO_TANGENT:
            return False
        for arg in node.args:  # (the function called is no data of its own: its name is not read)
            arg.visit(self)
        if isinstance(func, cst.Attribute):  # x.sum(): the receiver is read
            func.value.visit(self)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        inner = _Reads()
        node.body.visit(inner)
        self.names |= inner.names - {p.name.value for p in node.params.params}
        return False


def reads(node: cst.CSTNode) -> set[str]:
    """The names ``node`` reads as data: not a shape or dtype read off an array, not what a
    ``stop_gradient`` or ``zeros_like`` takes, not a function called."""
    visitor = _Reads()
    node.visit(visitor)
    return visitor.names


class _Bindings(cst.CSTVisitor):
    """Every binding of a function body (and of the defs and comprehensions in it): (names bound, names read)."""

    def __init__(self) -> None:
        self.bindings: list[tuple[set[str], set[str]]] = []

    def _bind(self, target: cst.CSTNode, value: cst.CSTNode | None, also: Iterable[str] = ()) -> None:
        names = {n.value for n in _names(target)}
        self.bindings.append((names, (reads(value) if value is not None else set()) | set(also)))

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._bind(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, node.value, reads(node.target))

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, node.iter)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target, node.iter)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name, node.item)


def _names(target: cst.CSTNode) -> list[cst.Name]:
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, cst.Tuple | cst.List):
        return [n for e in target.elements for n in _names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _names(target.value)
    return []  # p.w = ..., d["k"] = ...: binds no name


def seeded(fn: cst.FunctionDef | cst.Lambda, tangent: set[str]) -> frozenset[str]:
    """``fn``'s names with a cotangent: the least set holding ``tangent`` and every name bound from one."""
    visitor = _Bindings()
    fn.body.visit(visitor)
    has = set(tangent)
    changed = True
    while changed:
        changed = False
        for names, read in visitor.bindings:
            if read & has and not names <= has:
                has |= names
                changed = True
    return frozenset(has)


def _seeds(rw, passed: dict[str, cst.CSTNode | None]) -> set[str] | None:
    """The parameters of a function ``rw`` calls (``passed``: parameter -> the caller's argument node) that
    have a cotangent; None: not differentiating.  The differentiated function itself: ``rw.grad_args``, the
    argument nodes ``jax.grad`` differentiates."""
    if rw.grad_args is not None:
        return {p for p, node in passed.items() if node is not None and any(node is a for a in rw.grad_args)}
    if rw.tangent is None:
        return None
    return {p for p, node in passed.items() if node is not None and reads(node) & rw.tangent}


def enter(rw, sub, fn: cst.FunctionDef | cst.Lambda, passed: dict[str, cst.CSTNode | None], free: bool,
          carry: tuple[str, bool] | None = None) -> None:
    """Sets ``sub.tangent`` for a function ``rw`` calls while walking a differentiated one (``free``: it reads
    the caller's names too, a nested def; ``carry``: a loop body's carry parameter, and whether the body returns
    ``(carry, y)``)."""
    seeds = _seeds(rw, passed)
    if seeds is None:
        return
    sub.tangent = _with_carry(fn, seeds | (rw.tangent or set()) if free else seeds, carry)


def seeded_params(rw, fn: cst.Lambda, passed: dict[str, cst.CSTNode | None], carry: tuple[str, bool] | None
                  ) -> frozenset[str]:
    """A loop body lambda's parameters with a cotangent (it is walked in the caller's scope)."""
    seeds = _seeds(rw, passed) or set()
    return _with_carry(fn, seeds | set(rw.tangent or ()), carry) & {p.name.value for p in fn.params.params}


def _with_carry(fn: cst.FunctionDef | cst.Lambda, seeds: set[str], carry: tuple[str, bool] | None) -> frozenset[str]:
    """:func:`seeded`, then the carry parameter too where the carry the body returns has a cotangent (the next
    iteration's carry is that value: ``h`` starting from zeros has one once a weight is added in)."""
    has = seeded(fn, seeds)
    if carry is None or carry[0] in has:
        return has
    name, pair = carry
    for value in _returned(fn):
        if pair and isinstance(value, cst.Tuple | cst.List) and value.elements:
            value = value.elements[0].value
        if reads(value) & has:
            return seeded(fn, seeds | {name})
    return has


def _returned(fn: cst.FunctionDef | cst.Lambda) -> list[cst.BaseExpression]:
    """What ``fn`` returns: a lambda's body, a def's return values (not those of functions nested in it)."""
    if isinstance(fn, cst.Lambda):
        return [fn.body]
    found: list[cst.BaseExpression] = []

    class _Returns(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is fn

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Return(self, node: cst.Return) -> None:
            if node.value is not None:
                found.append(node.value)

    fn.visit(_Returns())
    return found


def key(rw, passed: dict[str, cst.CSTNode | None]) -> frozenset[str] | None:
    """What a helper version's walk depends on beyond its arguments' layouts while differentiating: which of
    its parameters have a cotangent (None: not differentiating)."""
    seeds = _seeds(rw, passed)
    return None if seeds is None else frozenset(seeds)


def note(rw, converts) -> None:
    """Records the psum of each operand's cotangent over the mesh axes other operands of the op vary over
    and it does not (its ``pvary``, transposed), and over the axes a conversion slices it along without
    its varying over them (``mr.local_block``: JAX broadcasts the whole block first)."""
    from meshify.rewrite._collectives import axes_text
    from meshify.rewrite._interp import Record

    if rw.tangent is None:
        return
    arrays = [c for c in converts if isinstance(c.operand.value, Array)]
    sides = [side(rw, c) for c in arrays]
    union = set().union(*(s.vary for s in sides))
    for c, one in zip(arrays, sides):
        if not reads(c.operand.original) & rw.tangent:
            continue  # no cotangent: nothing to sum
        what = rw.ctx.code(c.operand.original)
        steps = [(tuple(a for a in rw.mesh.names if a in union - one.vary), _block(c.layout))]
        steps += [(s.axes, _block(s.layout)) for s in one.slices]
        for axes, layout in steps:
            if not axes:
                continue
            value, invariant = rw._record_scope(c.operand.original)
            reason = (f"psum over {axes_text(axes)} {BACKWARD}: the cotangent of {what!r}, broadcast over "
                      f"{axes_text(axes)} to meet operands that vary there, summed")
            rw.records.append(Record(rw._line, "psum", axes, "", reason, layout, rw.loops,
                                     value=None if value is None else ("cotangent", value, axes),
                                     invariant=invariant, statement=rw._top))


@dataclass(frozen=True, slots=True)
class Gather:
    """An all_gather made as varying, or a local slice, of an operand over ``axes`` (see :class:`Side`)."""

    axes: tuple[str, ...]
    layout: Layout  # after the gather: the block whose cotangent is reduce-scattered (a slice's: before it)


@dataclass(frozen=True, slots=True)
class Side:
    """One operand of an op, for the backward pass: the mesh axes it varies over once converted, the
    all_gathers made as varying converting it, the local slices of it over axes it did not vary over
    (``mr.local_block`` indexes by ``axis_index``: JAX broadcasts the whole block there first), and
    what carries its dtype (empty: it has no cotangent)."""

    vary: frozenset[str]
    gathers: tuple[Gather, ...]
    slices: tuple[Gather, ...]
    reason: str


def side(rw, c) -> Side:
    """``c``'s operand as an op sees it, after the conversion steps ``convert`` makes: it varies over
    the axes its layout splits or is partial over, less those a psum or an invariant all_gather takes
    away, plus those a varying gather keeps and a slice adds."""
    from meshify.rewrite._plan import plan_conversion, step_result

    layout = c.operand.value.layout
    vary = set(layout.split_axes | layout.partial)
    gathers, slices = [], []
    for step in plan_conversion(layout, c.layout, rw.mesh) if layout != c.layout else []:
        before, layout = layout, step_result(step, layout)
        axes = set(step.axes)
        if step.kind == "all_gather" and axes <= c.varying:
            gathers.append(Gather(step.axes, layout.with_partial(())))
        elif step.kind in ("all_gather", "psum"):
            vary -= axes
        elif step.kind == "slice":
            missing = tuple(a for a in rw.mesh.names if a in axes - vary)
            if missing:
                slices.append(Gather(missing, before.with_partial(())))
            vary |= axes
    vary |= c.layout.split_axes | c.layout.partial
    carriers = rw.dtypes.of(c.operand.original)
    reason = "" if not carriers or set(carriers) <= {"bool"} else " ".join(carriers)
    # no reason: a constant, a mask, or unknown dtype (an index); else to drop integer parameters later
    return Side(frozenset(vary), tuple(gathers), tuple(slices), reason)


def _block(layout: Layout) -> Layout:
    """The cotangent's layout: whole, a size-1 dim broadcast against a split one unsplit (its block is itself)."""
    return Layout(layout.dims, tuple(() if d == BROADCAST else a for d, a in zip(layout.dims, layout.axes)))
