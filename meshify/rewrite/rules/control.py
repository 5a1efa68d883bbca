"""Loops over stacked layers: ``jax.lax.scan`` and ``jax.lax.fori_loop``.

The loop body (a helper of the module, or a lambda) is rewritten once for the layouts
of one iteration: the carry as it comes in, and each ``xs`` leaf without its leading
(stacked) dim, which must not be split.  The carry must leave the body in the layout it
came in; otherwise the error names it.  Collectives inside count once per iteration
(the leading dim's size) in ``explain``.

Branches (``jax.lax.cond`` / ``jax.lax.switch`` on a traced predicate or index): the test is
made whole first (every device must take the same branch), each branch (a lambda, a nested def,
a module helper) is walked like a loop body for the operands, and every branch's result is
converted inside the branch to one layout (the splits of the branch with fewest pending partial
sums; partial sums completed in the branch, where their dtypes can be named).  The generated
code keeps the ``cond``/``switch`` call with the rewritten branches.
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


def _body(rw, call: Call, fn_operand: Operand, args: list[Value], trips, target: Value | None = None,
          passed: list[cst.BaseExpression] | None = None, dtype: list | None = None
          ) -> tuple[Value, cst.BaseExpression]:
    """Rewrites the loop (or branch) body for ``args``; returns its result value and the body's new node.

    ``target``: the value the result must leave the body as (a cond's branches agree on one); it is
    converted inside the body.  ``passed``: the caller's nodes of ``args``, for their dtypes; the
    result's dtype carriers, in the caller's names, are appended to ``dtype``."""
    node = fn_operand.original
    rw._loops.append(TracedLoop(trips))
    try:
        local = local_def(rw, node.value) if isinstance(node, cst.Name) else None
        if local is not None:  # def body(carry, x): ... in the enclosing function
            return _local_body(rw, call, local, args, target, passed, dtype)
        if isinstance(node, cst.Name) and node.value in rw.ctx.functions:
            return _helper_body(rw, call, node, args, target, passed, dtype)
        if isinstance(node, cst.Lambda):
            return _lambda(rw, node, args, target, "the loop body's" if target is None and passed is None
                           else f"the {_short(call)} branch's", passed, dtype)
    finally:
        rw._loops.pop()
    raise rw.error(UnsupportedError, node, f"{_short(call)} body {rw.ctx.code(node)!r}",
                   "pass a function defined with def (here or at module level), or a lambda")


def _helper_body(rw, call: Call, node: cst.Name, args: list[Value], target: Value | None,
                 passed: list[cst.BaseExpression] | None, dtype: list | None) -> tuple[Value, cst.BaseExpression]:
    """A module helper as the body: its version for ``args``; a result to convert (a cond branch)
    is converted in a lambda around the version, ``lambda *branch_args: mr.psum(f__v(*branch_args), ...)``."""
    originals = passed if passed is not None else [cst.Name("_") for _ in args]
    fake = Call(cst.Call(func=node, args=[cst.Arg(o) for o in originals]), node.value,
                tuple(Operand(v, o, o) for v, o in zip(args, originals)), {})
    result, new_call = call_helper(rw, fake, rw.ctx.functions[node.value])
    if dtype is not None:
        dtype.append(rw.dtypes.of(fake.node))
    if target is None or signature_of(result) == signature_of(target):
        if target is None and passed is None and _partial(result) and fake.node in rw.dtypes.widened:
            raise rw.error(UnsupportedError, node, f"{node.value}() returns a partial sum accumulated in float32 "
                           f"out of a {_short(call)} body, and meshify cannot name the dtype to cast it back to there",
                           f"reduce it inside {node.value}() (give it a return hint)")
        return result, new_call.func
    star = cst.Name("branch_args")
    inner = cst.Call(new_call.func, [cst.Arg(star, star="*")])
    converted = _convert_to(rw, Operand(result, fake.node, inner), target, node)
    return converted.value, cst.Lambda(cst.Parameters(star_arg=cst.Param(star, star="*")), converted.node)


def _short(call: Call) -> str:
    return call.name.rsplit(".", 1)[-1]


def _partial(value: Value) -> bool:
    if isinstance(value, Array):
        return bool(value.layout.partial)
    if isinstance(value, TupleValue):
        return any(_partial(v) for v in value.items)
    if isinstance(value, StructValue):
        return any(_partial(v) for _, v in value.fields)
    return False


def _unconverted(rw, call: Call, node: cst.CSTNode, result: Value, target: Value) -> Exception:
    return rw.error(LayoutError, node, f"this {_short(call)} branch returns {_text(result)}, the other branches "
                    f"{_text(target)}, and meshify can convert only a lambda's or a single array's result inside "
                    "the branch", "give the branches' results the same layouts (pin them with a return hint or a "
                    "Tensor hint before returning), or pass a lambda that calls the function")


def _text(value: Value) -> str:
    if isinstance(value, Array):
        return value.layout.describe()
    if isinstance(value, TupleValue):
        return "(" + ", ".join(_text(v) for v in value.items) + ")"
    return type(value).__name__.lower()


def _local_body(rw, call: Call, local, args: list[Value], target: Value | None = None,
                passed: list[cst.BaseExpression] | None = None, dtype: list | None = None
                ) -> tuple[Value, cst.BaseExpression]:
    """A nested def as the loop body: rewritten where the loop traces it, in the enclosing scope."""
    p = local.node.params
    positional = [q.name.value for q in (*p.posonly_params, *p.params)]
    if len(positional) < len(args):
        raise rw.error(UnsupportedError, local.node, f"{local.name}() takes {len(positional)} arguments but "
                       f"{_short(call)} passes it {len(args)}",
                       f"give {local.name}() one parameter per value the loop passes")
    bound = dict(zip(positional, args))
    carriers = None
    if passed is not None:
        carriers = {param: rw.dtypes.of(node) for param, node in zip(positional, passed)}
    for q in (*p.posonly_params, *p.params, *p.kwonly_params):
        name = q.name.value
        if name not in bound:
            if name not in local.defaults:
                raise rw.error(UnsupportedError, local.node, f"{local.name}() is missing argument {name!r} when "
                               f"{_short(call)} calls it", f"give {name!r} a default")
            bound[name] = local.defaults[name]
            if carriers is not None:
                carriers[name] = local.default_dtypes.get(name)
    forced = target.layout if isinstance(target, Array) else None
    result, sub, name = walk_local(rw, local, bound, call.node, carriers, forced=forced)
    if dtype is not None:
        dtype.append(sub.dtypes.in_caller(sub.return_dtype, carriers or {}))
    if passed is None and _partial(result) and sub.returns_widened:
        raise rw.error(UnsupportedError, local.node, f"{local.name}() returns a partial sum accumulated in float32 "
                       f"out of a {_short(call)} body, and meshify cannot name the dtype to cast it back to there",
                       f"reduce it inside {local.name}() (pin it with a Tensor hint before returning)")
    return result, name


def _lambda(rw, node: cst.Lambda, args: list[Value], target: Value | None = None,
            what: str = "the loop body's", passed: list[cst.BaseExpression] | None = None,
            dtype: list | None = None) -> tuple[Value, cst.BaseExpression]:
    params = [p.name.value for p in node.params.params]
    if len(params) != len(args) or node.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT):
        raise rw.error(UnsupportedError, node, f"a loop body lambda taking {len(params)} arguments, "
                       f"called with {len(args)}", "give the lambda one parameter per value the loop passes")
    saved = {p: rw.env.get(p) for p in params}
    saved_names = set(rw.lambda_names)
    rw.env.update(zip(params, args))
    rw.lambda_names |= set(params)
    try:
        body = rw.complete_widened(rw.expr(node.body), f"{what} result (its dtype is read from the lambda's names)")
        if target is not None:
            body = _convert_to(rw, body, target, node)
        if dtype is not None and passed is not None:
            dtype.append(_in_caller(rw.dtypes.of(node.body), dict(zip(params, (rw.dtypes.of(p) for p in passed)))))
    finally:
        for p, v in saved.items():
            if v is None:
                rw.env.pop(p, None)
            else:
                rw.env[p] = v
        rw.lambda_names = saved_names
    return body.value, node.with_changes(body=body.node)


def _in_caller(carriers, passed: dict) -> tuple[str, ...] | None:
    """A lambda body's dtype carriers with its parameters replaced by the carriers of what is passed."""
    from meshify.rewrite._dtypes import _names_in

    if carriers is None:
        return None
    out: tuple[str, ...] = ()
    for text in carriers:
        if text in passed:
            if passed[text] is None:
                return None
            out = (*out, *passed[text])
        elif any(n in passed for n in _names_in(text)):
            return None
        else:
            out = (*out, text)
    return tuple(dict.fromkeys(out))


def _convert_to(rw, op: Operand, target: Value, where: cst.CSTNode) -> Operand:
    """A branch's result converted, inside the branch, to the layout every branch returns."""
    value = op.value
    if signature_of(value) == signature_of(target):
        return op
    if isinstance(value, Array) and isinstance(target, Array):
        return Operand(target, op.original, rw.convert(op, target.layout, "the layout every branch returns"))
    if isinstance(value, TupleValue) and isinstance(target, TupleValue) and isinstance(op.original, cst.Tuple) \
            and isinstance(op.node, cst.Tuple) and len(op.original.elements) == len(value.items) == len(target.items):
        items = [_convert_to(rw, Operand(v, e.value, n.value), t, where)
                 for v, t, e, n in zip(value.items, target.items, op.original.elements, op.node.elements)]
        node = op.node.with_changes(elements=[e.with_changes(value=i.node) for e, i in zip(op.node.elements, items)])
        return Operand(TupleValue(tuple(i.value for i in items)), op.original, node)
    raise rw.error(LayoutError, where, f"this branch returns {_text(value)}, another {_text(target)}",
                   "return a tuple literal, (a, b), so that each item can be converted, or pin the items with "
                   "Tensor hints")


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



# -- branches: jax.lax.cond and jax.lax.switch ------------------------------------------------------

BODY_OPS.update({"jax.lax.cond", "jax.lax.switch"})


@op("jax.lax.cond", reads=("pred", "true_fun", "false_fun", "operands"))
def _cond(rw, call: Call):
    pred, branches = call.params.get("pred"), [call.params.get("true_fun"), call.params.get("false_fun")]
    if pred is None or None in branches:
        return unknown_call(rw, call)
    positions = [call.position(b) for b in branches]
    return _branches(rw, call, pred, branches, lambda nodes: {i: n for i, n in zip(positions, nodes)})


@op("jax.lax.switch", reads=("index", "branches", "operands"))
def _switch(rw, call: Call):
    index, listed = call.params.get("index"), call.params.get("branches")
    if index is None or listed is None:
        return unknown_call(rw, call)
    node = listed.original
    if not isinstance(node, cst.List | cst.Tuple) or not node.elements:
        raise rw.error(UnsupportedError, node, f"switch over the branches {rw.ctx.code(node)!r}, which meshify cannot "
                       "see one by one", "write the branches as a list literal: [f, g, lambda x: ...]")
    branches = [Operand(Static(), e.value, e.value) for e in node.elements]

    def rebuilt(nodes):
        return {call.position(listed): node.with_changes(
            elements=[e.with_changes(value=n) for e, n in zip(node.elements, nodes)])}
    return _branches(rw, call, index, branches, rebuilt)


def _branches(rw, call: Call, test: Operand, branches: list[Operand], placed) -> tuple[Value, cst.BaseExpression]:
    """``cond``/``switch``: the test made whole (every device must take the same branch), each branch
    walked for the operands, and every branch's result converted, inside the branch, to one layout."""
    kind = _short(call)
    operands = [rw.complete_widened(o, f"a {kind} operand (a branch could not name its dtype)")
                for o in call.params.get("operands", ())]
    replaced = {call.position(o): o.node for o in operands}
    if isinstance(test.value, Array):
        if test.value.layout.rank:
            raise rw.error(LayoutError, test.original, f"the {kind} {'predicate' if kind == 'cond' else 'index'} "
                           f"{rw.ctx.code(test.original)!r} has dims {list(test.value.layout.dims)}, not a scalar",
                           "reduce it to a scalar first (jnp.any(...), jnp.all(...), or index one element)")
        whole = Layout.replicated(())
        replaced[call.position(test)] = rw.convert(
            test, whole, f"the {kind} {'predicate' if kind == 'cond' else 'index'} (every device must take the "
            "same branch)")
    args = [o.value for o in operands]
    passed = [o.original for o in operands]
    mark = rw.mark()
    results = [_body(rw, call, b, args, 1, passed=passed)[0] for b in branches]
    target = _common(rw, call, results)
    rw.rollback(mark)
    nodes, dtypes = [], []
    for branch, result in zip(branches, results):
        need = None if signature_of(result) == signature_of(target) else target
        if need is not None and not isinstance(target, Array) and isinstance(branch.original, cst.Name) \
                and local_def(rw, branch.original.value) is not None:
            raise _unconverted(rw, call, branch.original, result, target)
        _, node = _body(rw, call, branch, args, 1, target=need, passed=passed, dtype=dtypes)
        nodes.append(node)
    replaced.update(placed(nodes))
    # JAX requires every branch to return the same dtypes: the first branch whose carriers are known says them
    rw.dtypes.calls[call.node] = next((d for d in dtypes if d is not None), None)
    return target, call.rebuild(rw, replaced)


def _common(rw, call: Call, results: list[Value]) -> Value:
    """The layout every branch returns: per array, the splits of the branch with fewest pending
    partial sums, every partial sum completed inside its branch (where the names its dtype is read
    from exist; one psum runs either way, in the branch taken)."""
    from meshify.rewrite._interp import _common_layout

    first = results[0]
    if all(signature_of(r) == signature_of(first) for r in results[1:]) and not _partial(first):
        return first
    if all(isinstance(r, Array) for r in results):
        layout = _common_layout(results)
        if layout is not None:  # partial sums completed in the branch: it knows their dtypes
            return Array(layout.with_partial(()), first.origin)
    if all(isinstance(r, TupleValue) and len(r.items) == len(first.items) for r in results):
        return TupleValue(tuple(_common(rw, call, list(items)) for items in zip(*(r.items for r in results))))
    if all(isinstance(r, Static) for r in results):
        return Static()
    raise rw.error(LayoutError, call.node, f"the branches of this {_short(call)} return different dims: "
                   + "; ".join(_text(r) for r in results),
                   "return the same dims from every branch (JAX requires the same shapes too)")
