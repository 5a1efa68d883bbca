"""Loops over stacked layers: ``jax.lax.scan`` and ``jax.lax.fori_loop``.

The loop body (a helper of the module, or a lambda) is rewritten once for the layouts
of one iteration: the carry as it comes in, and each ``xs`` leaf without its leading
(stacked) dim, which must not be split.  The carry must leave the body in the layout it
came in; otherwise the error names it.  Collectives inside count once per iteration
(the leading dim's size) in ``explain``.
"""

from __future__ import annotations

import libcst as cst

from meshify.annotate._types import Layout
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._helpers import call_helper, signature_of
from meshify.rewrite._nested import local_def, walk_local
from meshify.rewrite._values import Array, Operand, Static, StructValue, TracedLoop, TupleValue, Value
from meshify.rewrite.rules._api import BODY_OPS, Call, op, unknown_call

__all__: list[str] = []


def _drop_leading(rw, value: Value, where) -> tuple[Value, str | None]:
    """One iteration's slice of ``xs``: every array leaf without its leading dim."""
    if isinstance(value, Array):
        layout = value.layout
        if layout.rank == 0:
            raise rw.error(LayoutError, where, "scan over a scalar", "scan over an array with a leading dim")
        if layout.axes[0]:
            raise rw.error(UnsupportedError, where,
                           f"scan over dim {layout.dims[0]!r}, which is split over {layout.axes[0]}",
                           f"map {layout.dims[0]!r} to no mesh axis: each device must hold every layer")
        return Array(Layout(layout.dims[1:], layout.axes[1:], layout.partial), value.origin), layout.dims[0]
    if isinstance(value, StructValue):
        fields, dim = [], None
        for name, field in value.fields:
            sliced, d = _drop_leading(rw, field, where)
            fields.append((name, sliced))
            dim = dim or d
        return StructValue(value.cls, tuple(fields), value.kind), dim
    if isinstance(value, TupleValue):
        items, dim = [], None
        for item in value.items:
            sliced, d = _drop_leading(rw, item, where)
            items.append(sliced)
            dim = dim or d
        return TupleValue(tuple(items)), dim
    return value, None


def _stack(value: Value, dim: str) -> Value:
    """A body output stacked over the iterations: a new leading, unsplit dim."""
    if isinstance(value, Array):
        layout = value.layout
        return Array(Layout((dim, *layout.dims), ((), *layout.axes), layout.partial), value.origin)
    if isinstance(value, TupleValue):
        return TupleValue(tuple(_stack(v, dim) for v in value.items))
    if isinstance(value, StructValue):
        return StructValue(value.cls, tuple((k, _stack(v, dim)) for k, v in value.fields), value.kind)
    return value


def _body(rw, call: Call, fn_operand: Operand, args: list[Value], trips) -> tuple[Value, cst.BaseExpression]:
    """Rewrites the loop body for ``args``; returns its result value and the body's new node."""
    node = fn_operand.original
    rw._loops.append(TracedLoop(trips))
    try:
        local = local_def(rw, node.value) if isinstance(node, cst.Name) else None
        if local is not None:  # def body(carry, x): ... in the enclosing function
            return _local_body(rw, call, local, args)
        if isinstance(node, cst.Name) and node.value in rw.ctx.functions:
            fake = Call(cst.Call(func=node, args=[]), node.value,
                        tuple(Operand(v, cst.Name("_"), cst.Name("_")) for v in args), {})
            result, new_call = call_helper(rw, fake, rw.ctx.functions[node.value])
            return result, new_call.func
        if isinstance(node, cst.Lambda):
            return _lambda(rw, node, args)
    finally:
        rw._loops.pop()
    raise rw.error(UnsupportedError, node, f"{call.name.rsplit('.', 1)[-1]} body {rw.ctx.code(node)!r}",
                   "pass a function defined with def (here or at module level), or a lambda")


def _local_body(rw, call: Call, local, args: list[Value]) -> tuple[Value, cst.BaseExpression]:
    """A nested def as the loop body: rewritten where the loop traces it, in the enclosing scope."""
    p = local.node.params
    positional = [q.name.value for q in (*p.posonly_params, *p.params)]
    if len(positional) < len(args):
        raise rw.error(UnsupportedError, local.node, f"{local.name}() takes {len(positional)} arguments but "
                       f"{call.name.rsplit('.', 1)[-1]} passes it {len(args)}",
                       f"give {local.name}() one parameter per value the loop passes")
    bound = dict(zip(positional, args))
    for q in (*p.posonly_params, *p.params, *p.kwonly_params):
        name = q.name.value
        if name not in bound:
            if name not in local.defaults:
                raise rw.error(UnsupportedError, local.node, f"{local.name}() is missing argument {name!r} when "
                               f"{call.name.rsplit('.', 1)[-1]} calls it", f"give {name!r} a default")
            bound[name] = local.defaults[name]
    result, _, name = walk_local(rw, local, bound, call.node)
    return result, name


def _lambda(rw, node: cst.Lambda, args: list[Value]) -> tuple[Value, cst.BaseExpression]:
    params = [p.name.value for p in node.params.params]
    if len(params) != len(args) or node.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT):
        raise rw.error(UnsupportedError, node, f"a loop body lambda taking {len(params)} arguments, "
                       f"called with {len(args)}", "give the lambda one parameter per value the loop passes")
    saved = {p: rw.env.get(p) for p in params}
    saved_names = set(rw.lambda_names)
    rw.env.update(zip(params, args))
    rw.lambda_names |= set(params)
    try:
        body = rw.complete_widened(rw.expr(node.body), "the loop body's result (its dtype is read from the "
                                                       "lambda's names)")
    finally:
        for p, v in saved.items():
            if v is None:
                rw.env.pop(p, None)
            else:
                rw.env[p] = v
        rw.lambda_names = saved_names
    return body.value, node.with_changes(body=body.node)


def _same_carry(rw, before: Value, after: Value, where, what: str) -> None:
    if signature_of(before) != signature_of(after):
        def text(v):
            return v.layout.describe() if isinstance(v, Array) else type(v).__name__
        raise rw.error(LayoutError, where,
                       f"the {what} carry changes layout in the loop body: {text(before)} in, {text(after)} out",
                       "return the carry in the layout it came in (pin it with a Tensor hint in the body)")


BODY_OPS.update({"jax.lax.scan", "jax.lax.fori_loop"})


@op("jax.lax.scan")
def _scan(rw, call: Call):
    f, init, xs = call.arg(0, "f"), call.arg(1, "init"), call.arg(2, "xs")
    if f is None or init is None:
        return unknown_call(rw, call)
    if "length" in call.kwargs and (xs is None or isinstance(xs.value, Static)):
        trips = call.kwargs["length"].value.literal if isinstance(call.kwargs["length"].value, Static) else None
        x_value, dim = Static(), None
    else:
        x_value, dim = _drop_leading(rw, xs.value, xs.original) if xs is not None else (Static(), None)
        trips = dim
    mark = rw.mark()
    result, body = _scan_body(rw, call, f, init.value, x_value, trips)
    init_node = None
    if _settles_elsewhere(init.value, result.items[0]):
        rw.rollback(mark)
        settled, init_node = _enter_as(rw, init, result.items[0], "scan")
        result, body = _scan_body(rw, call, f, settled, x_value, trips)
    carry, y = result.items
    _same_carry(rw, init.value if init_node is None else settled, carry, f.original, "scan")
    new = call.rebuild(rw, {0: body} if init_node is None else {0: body, 1: init_node})
    return TupleValue((carry, _stack(y, dim or "scan"))), new


def _scan_body(rw, call: Call, f: Operand, init: Value, x_value: Value, trips) -> tuple[TupleValue, cst.BaseExpression]:
    result, body = _body(rw, call, f, [init, x_value], trips)
    if not (isinstance(result, TupleValue) and len(result.items) == 2):
        raise rw.error(LayoutError, f.original, "a scan body must return (carry, y)",
                       "return a pair: the new carry and the per-step output (or None)")
    return result, body


def _settles_elsewhere(init: Value, carry: Value) -> bool:
    """The body returns the carry in another layout of the same dims (a partial sum it needed
    whole, a dim it split or gathered): the loop should run in that layout from the start."""
    return (isinstance(init, Array) and isinstance(carry, Array) and init.layout.dims == carry.layout.dims
            and init.layout != carry.layout)


def _enter_as(rw, init: Operand, carry: Array, what: str) -> tuple[Array, cst.BaseExpression]:
    """The carry converted, on its way into the loop, to the layout the body returns it in
    (converting inside would repeat the conversion, a psum even summing again, each iteration);
    a named carry that needs a psum gets it in its own statement before this one."""
    assert isinstance(init.value, Array)
    layout = carry.layout
    return Array(layout, init.value.origin), rw.convert(init, layout, f"the {what} carry")


@op("jax.lax.fori_loop")
def _fori_loop(rw, call: Call):
    lower, upper, f, init = (call.arg(i, k) for i, k in enumerate(["lower", "upper", "body_fun", "init_val"]))
    if init is None or f is None:
        return unknown_call(rw, call)
    lo, hi = lower.value, upper.value
    trips = None
    if isinstance(lo, Static) and isinstance(hi, Static):
        if lo.known and hi.known and isinstance(lo.literal, int) and isinstance(hi.literal, int):
            trips = hi.literal - lo.literal
        elif lo.known and lo.literal == 0:
            trips = hi.size_of
    mark = rw.mark()
    result, body = _body(rw, call, f, [Static(), init.value], trips)
    if _settles_elsewhere(init.value, result):
        rw.rollback(mark)
        settled, init_node = _enter_as(rw, init, result, "fori_loop")
        result, body = _body(rw, call, f, [Static(), settled], trips)
        _same_carry(rw, settled, result, f.original, "fori_loop")
        return result, call.rebuild(rw, {2: body, 3: init_node})
    _same_carry(rw, init.value, result, f.original, "fori_loop")
    return result, call.rebuild(rw, {2: body})

