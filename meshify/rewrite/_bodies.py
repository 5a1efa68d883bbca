"""Walks the functions a loop or branch rule names: the interpreter's half of
:class:`~meshify.rewrite.rules._api.Loop` and :class:`~meshify.rewrite.rules._api.Branches`.

A rule says which function arguments the call runs, for which values, and the policy for their
results; here each one is rewritten in the caller's scope (a lambda in place, a nested def where
the loop traces it, a module helper as its version for these layouts).  Where a walk's result
decides the next step, the walk is undone (``rw.mark()`` / ``rw.rollback()``) and repeated: a
loop's carry that leaves the body in another layout enters the loop in that layout; branches are
walked once to learn their results and again to convert each to the layout they share.  After
this, each body's new node is in place in the call, every collective in a loop body is recorded
with the loop's trip count, and the call's result value is known.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any

import libcst as cst

from meshify.annotate._types import Layout, hint_dims, renamed_dims
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._helpers import call_helper, imported_helper, signature_of
from meshify.rewrite._mappings import maybe_none_paths, with_maybe_none
from meshify.rewrite._nested import local_def, walk_local
from meshify.rewrite._templates import item_node
from meshify.rewrite._values import (
    Array,
    LambdaRef,
    LocalRef,
    Opaque,
    Operand,
    Static,
    StructValue,
    TracedLoop,
    TupleValue,
    Value,
    holds_partial,
)
from meshify.rewrite.rules._api import At, Branches, Call, Loop, Lowering, literal_items

__all__ = ["is_partial", "partial_lambda", "run_walks", "walk_lambda"]

#: Numbers each walk of a body (TracedLoop.body).
_BODIES = itertools.count(1)


def run_walks(rw, call: Call, lowering: Lowering) -> tuple[Value, cst.Call]:
    """Carries out a lowering whose ``walks`` names the functions the call runs: the branches'
    operands completed, the lowering's conversions, the walks; returns the call's value and node."""
    walks = lowering.walks
    completed = _completed(rw, call, walks) if isinstance(walks, Branches) else []
    if isinstance(walks, Loop):
        walks, completed = _loop_inputs_completed(rw, call, walks)
    nodes = rw.carry_out(lowering)
    if isinstance(walks, Loop):
        walks = _init_replaced(rw, call, walks, lowering, nodes)
        value, walked = _loop(rw, call, walks)
        # JAX keeps a carry's dtype through the loop: the carry that comes out has the init's
        if walks.stacked is None and isinstance(value, Array) and call.node not in rw.dtypes.calls:
            rw.dtypes.calls[call.node] = rw.dtypes.of(walks.init.original)
    else:
        assert isinstance(walks, Branches), walks
        value, walked = _branches(rw, call, walks, completed)
    walked.update({At(call.position(o)): o.node for o in completed})
    return value, rw.rebuilt(call, lowering, nodes, walked)


def _init_replaced(rw, call: Call, loop: Loop, lowering: Lowering, nodes: list) -> Loop:
    """``loop`` whose init is the node the lowering puts in its place (an associative_scan's elems, a leaf of it
    converted to each device's block), so that a conversion on the way into the loop starts from it."""
    at = At(call.position(loop.init))
    part = next((value for where, value in lowering.replace if where == at), None)
    if part is None:
        return loop
    return replace(loop, init=Operand(loop.init.value, loop.init.original, rw._part_node(part, nodes)))


# -- loops: the carry's layout to a fixpoint ---------------------------------------------------------


def _loop(rw, call: Call, loop: Loop) -> tuple[Value, dict[At, cst.BaseExpression]]:
    entering = _traced_numbers(loop.args[loop.carry])
    mark = rw.mark()
    result, node = _iteration(rw, call, loop, entering)
    walked: dict[At, cst.BaseExpression] = {}
    carry = _carry(loop, result)
    summed = _summed_in_body(entering, carry)
    if summed is not None:
        # (entering whole and leaving as a partial sum, the loop cannot run in either layout as it is: a whole
        # carry is no partial sum of the devices', and the body's result is not the whole carry)
        raise rw.error(LayoutError, loop.body.fn.original, f"the {call.short} body returns its carry as a partial "
                       f"sum over {', '.join(repr(a) for a in sorted(summed.layout.partial))} "
                       f"({summed.layout.describe()}{': ' + summed.origin if summed.origin else ''}) where it enters "
                       "whole", "pin the carry with a Tensor hint where the body computes it (h: Tensor["
                       f"{hint_dims(summed.layout.dims) if summed.layout.dims else '()'}] = ...): it is then made "
                       "whole there, each iteration")
    items = literal_items(loop.init) if _items_settle_elsewhere(entering, carry) else None
    if items is None and _items_settle_elsewhere(entering, carry) and isinstance(entering, TupleValue):
        # init = (jnp.zeros((B, C)), ...) bound to a name first (RWKV's state): its items read off the name
        assert isinstance(loop.init.value, TupleValue)
        items = [Operand(v, item_node(loop.init.original, k), item_node(loop.init.node, k))
                 for k, v in enumerate(loop.init.value.items)]
    if _enters_elsewhere(entering, carry) or items is not None:
        # the loop runs in the layout its body returns the carry in: the carry converted on its way in
        # (item by item for a tuple literal, (h, total) = (jnp.zeros(...), 0.0))
        rw.rollback(mark)
        if items is None:
            entering, walked[At(call.position(loop.init))] = _entering(rw, loop.init, entering, carry, call.short)
        else:
            assert isinstance(entering, TupleValue) and isinstance(carry, TupleValue)
            pairs = [_entering(rw, item, before, after, call.short)
                     for item, before, after in zip(items, entering.items, carry.items)]
            entering = TupleValue(tuple(value for value, _ in pairs))
            literal = loop.init.node if isinstance(loop.init.node, cst.Tuple | cst.List) else \
                cst.Tuple([cst.Element(item.node) for item in items])
            walked[At(call.position(loop.init))] = literal.with_changes(
                elements=[e.with_changes(value=n) for e, (_, n) in zip(literal.elements, pairs)])
        result, node = _iteration(rw, call, loop, entering)
    _same_carry(rw, entering, _carry(loop, result), loop.body.fn.original, call.short)
    walked[loop.body.at] = _regathering(rw, node, mark.records)
    if loop.cond is not None:  # while_loop: its condition on the carry as the loop runs it, whole everywhere
        decided, walked[loop.cond.at] = _walk(rw, call, loop.cond.fn, [entering], loop.trips,
                                              target=Array(Layout.replicated(())))
        if not (isinstance(decided, Array) and decided.layout.rank == 0) and not isinstance(decided, Opaque):
            raise rw.error(LayoutError, loop.cond.fn.original, f"the {call.short} condition returns "
                           f"{type(decided).__name__.lower()}, not a scalar array",
                           "return one boolean: jnp.any(...), x < limit, ...")
    if loop.stacked is None:
        return _maybe_result(rw, loop, result, result), walked
    assert isinstance(result, TupleValue)
    carry, y = result.items
    return _maybe_result(rw, loop, result, TupleValue((carry, _stack(y, loop.stacked)))), walked


def _summed_in_body(init: Value, carry: Value) -> Array | None:
    """The carry (or a carry item) the body returns as a partial sum over axes it does not enter partial over."""
    if isinstance(init, TupleValue) and isinstance(carry, TupleValue) and len(init.items) == len(carry.items):
        return next((s for s in map(_summed_in_body, init.items, carry.items) if s is not None), None)
    if isinstance(init, StructValue) and isinstance(carry, StructValue):
        fields = dict(init.fields)
        return next((s for k, v in carry.fields if k in fields
                     for s in [_summed_in_body(fields[k], v)] if s is not None), None)
    if isinstance(carry, Array) and carry.layout.partial - (init.layout.partial if isinstance(init, Array) else set()):
        return carry
    return None


def _traced_numbers(init: Value) -> Value:
    """A carry as the loop body sees it: a Python number in it (``(h, 0)``, a step counter; ``x.shape[0]``)
    is a traced 0-d array there, as JAX converts it, not a static value (``n + 1`` is traced too)."""
    if isinstance(init, Static) and (init.size_of is not None or (init.known and type(init.literal) in (
            int, float, bool)) or (not init.known and init.shape_of is None and init.param is None)):
        return Opaque(())  # (not known: jnp.int32(0), np.float32(1.0), a number computed from sizes)
    if isinstance(init, TupleValue):
        return TupleValue(tuple(_traced_numbers(v) for v in init.items))
    return init


def _regathering(rw, node: cst.BaseExpression, since: int) -> cst.BaseExpression:
    """A loop body that gathers weights as FSDP's (records from ``since`` on), under
    ``mr.regathering`` unless ``@mesh(regather=False)``: JAX's backward pass of a loop stacks what
    each iteration saves, so every layer's gathered weights would stay alive until the backward pass;
    under ``jax.checkpoint`` (saving all but those gathers) each iteration gathers its layer again.
    (Outside loops there is nothing to gain: XLA merges a gather redone in the backward pass with
    the forward pass's, so Python-unrolled layers keep their gathered weights.)"""
    if not rw.regather or not any(r.varying for r in rw.records[since:]):
        return node
    rw.records[since:] = [replace(r, regathered=True) for r in rw.records[since:]]
    rw._comments.append("regathering: the backward pass gathers the body's FSDP weights again, layer by layer, "
                        "instead of keeping every layer's gathered weights until then (@mesh(regather=False) keeps them)")
    return cst.Call(cst.Attribute(cst.Name(rw.ctx.mr), cst.Name("regathering")), [cst.Arg(node)])


def _iteration(rw, call: Call, loop: Loop, carry: Value) -> tuple[Value, cst.BaseExpression]:
    """The body walked for one iteration with ``carry`` entering (what may be None in the loop's inputs, an array or
    None known only when traced, is so in the body too: ``if m is not None:`` keeps both branches)."""
    args = [with_maybe_none(rw, carry if i == loop.carry else a, paths)
            for i, (a, paths) in enumerate(zip(loop.args, _maybe_inputs(rw, call, loop)))]
    result, node = _walk(rw, call, loop.body.fn, args, loop.trips, unroll=loop.unroll,
                         sources=Sources(loop.sources, loop.carry, loop.stacked is not None) if loop.sources else None)
    if loop.stacked is not None and not (isinstance(result, TupleValue) and len(result.items) == 2):
        raise rw.error(LayoutError, loop.body.fn.original, f"a {call.short} body must return (carry, y)",
                       "return a pair: the new carry and the per-step output (or None)")
    return result, node


def _maybe_inputs(rw, call: Call, loop: Loop) -> list[frozenset[tuple]]:
    """Per argument of the body, where it holds an array or None known only when traced
    (:func:`~meshify.rewrite._mappings.maybe_none_paths`): the carry's, as ``init`` holds it, and a scan's ``xs``."""
    xs = call.arg(2, "xs") if loop.stacked is not None else None
    return [maybe_none_paths(rw, loop.init.value) if i == loop.carry else
            maybe_none_paths(rw, xs.value) if xs is not None and i == 1 else frozenset()
            for i in range(len(loop.args))]


def _maybe_result(rw, loop: Loop, result: Value, value: Value) -> Value:
    """The loop's ``value`` with what may be None marked so (:func:`_maybe_inputs`): a carry where ``init`` or the
    body's result may be None, a scan's ``ys`` where the body's ``y`` may be (None stacked is None)."""
    paths = maybe_none_paths(rw, result)
    if loop.stacked is None:
        return with_maybe_none(rw, value, paths | maybe_none_paths(rw, loop.init.value))
    carried = maybe_none_paths(rw, loop.init.value)
    return with_maybe_none(rw, value, paths | frozenset((0, *p) for p in carried))


def _carry(loop: Loop, result: Value) -> Value:
    """The carry a walked body returns: its whole result, or the first of its ``(carry, y)``."""
    if loop.stacked is None:
        return result
    assert isinstance(result, TupleValue)
    return result.items[0]


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


def _settles_elsewhere(init: Value, carry: Value) -> bool:
    """The body returns the carry in another layout of the same dims (a partial sum it needed
    whole, a dim it split or gathered): the loop should run in that layout from the start."""
    return (isinstance(init, Array) and isinstance(carry, Array) and init.layout != carry.layout
            and (init.layout.dims == carry.layout.dims or renamed_dims(init.layout.dims, carry.layout.dims)))


def _enters_elsewhere(init: Value, carry: Value) -> bool:
    """The loop should run with the carry as the body returns it: another layout of the same dims, or
    the body's named dims for a whole carry of none."""
    return _named_by_body(init, carry) or _static_enters(init, carry) \
        or (isinstance(carry, Array) and _settles_elsewhere(init, carry))


def _items_settle_elsewhere(init: Value, carry: Value) -> bool:
    """A tuple carry some of whose items enter elsewhere (:func:`_enters_elsewhere`)."""
    return isinstance(init, TupleValue) and isinstance(carry, TupleValue) and len(init.items) == len(carry.items) \
        and any(_enters_elsewhere(a, b) for a, b in zip(init.items, carry.items))


def _entering(rw, init: Operand, before: Value, after: Value, what: str) -> tuple[Value, cst.BaseExpression]:
    """The carry (or a carry item) ``init`` as the loop runs it, and its node."""
    if _named_by_body(before, after):  # c = jnp.zeros(()) carried as the body's named scalar
        return after, init.node
    if _static_enters(before, after):  # the same on every device: sliced on its way in
        assert isinstance(after, Array)
        whole = Operand(Array(Layout.replicated(after.dims)), init.original, init.node)
        return _enter_as(rw, whole, after, what) if after.layout.is_split else (after, init.node)
    if isinstance(after, Array) and _settles_elsewhere(before, after):
        return _enter_as(rw, init, after, what)
    return before, init.node


def _static_enters(init: Value, carry: Value) -> bool:
    """A carry the same on every device (an instance's array, a static :func:`_traced_numbers` left as it is;
    or an array of dims meshify cannot name: ``jnp.zeros((B, D))``) that the body returns as an array: the
    loop runs it as the body returns it, sliced on its way in where that is split (JAX requires the
    carry's shape to stay)."""
    if not isinstance(carry, Array) or carry.layout.partial:
        return False
    if isinstance(init, Opaque):
        return init.shape is None or len(init.shape) == carry.layout.rank
    return isinstance(init, Static)


def _named_by_body(init: Value, carry: Value) -> bool:
    """A whole carry of dims meshify cannot name (``jnp.zeros(())``, an Opaque) that the body returns whole
    with named dims of the same rank: the loop runs it with the body's dims (nothing to convert)."""
    return isinstance(init, Opaque) and isinstance(carry, Array) and not carry.layout.is_split \
        and not carry.layout.partial and (init.shape is None or len(init.shape) == carry.layout.rank)


def _enter_as(rw, init: Operand, carry: Array, what: str) -> tuple[Array, cst.BaseExpression]:
    """The carry converted, on its way into the loop, to the layout the body returns it in
    (converting inside would repeat the conversion, a psum even summing again, each iteration);
    a named carry that needs a psum gets it in its own statement before this one."""
    assert isinstance(init.value, Array)
    layout = carry.layout
    if init.value.layout.dims != layout.dims:  # its inferred dims as the body names them (seq? as seq)
        named = Layout(layout.dims, init.value.layout.axes, init.value.layout.partial)
        init = Operand(Array(named, init.value.origin), init.original, init.node)
    return Array(layout, init.value.origin), rw.convert(init, layout, f"the {what} carry")


def _carried(value: Value) -> object:
    """What a loop carry must keep: :func:`signature_of`, a dict's keys and values whatever class named it (a
    ``TypedDict`` comes in, the body returns ``{"k": ck}``: both a dict to JAX)."""
    if isinstance(value, StructValue) and value.kind == "dict":
        return ("dict", tuple(sorted((k, _carried(v)) for k, v in value.fields)))
    if isinstance(value, StructValue):
        return ("struct", value.cls, value.kind, tuple((k, _carried(v)) for k, v in value.fields))
    if isinstance(value, TupleValue):
        return ("tuple", tuple(_carried(v) for v in value.items))
    return signature_of(value)


def _same_carry(rw, before: Value, after: Value, where, what: str) -> None:
    if _carried(before) != _carried(after):
        def text(v):
            if isinstance(v, TupleValue):
                return "(" + ", ".join(text(i) for i in v.items) + ")"
            if isinstance(v, StructValue):
                return v.cls + "{" + ", ".join(f"{k}: {text(i)}" for k, i in v.fields) + "}"
            return v.layout.describe() if isinstance(v, Array) else type(v).__name__.lower()
        raise rw.error(LayoutError, where,
                       f"the {what} carry changes layout in the loop body: {text(before)} in, {text(after)} out",
                       "return the carry in the layout it came in (pin it with a Tensor hint in the body)")


# -- branches: one layout whichever runs ------------------------------------------------------------


def _loop_inputs_completed(rw, call: Call, loop: Loop) -> tuple[Loop, list[Operand]]:
    """A scan's ``xs`` holding a partial sum formed in float32 (a bfloat16 ``x @ emb`` over a
    split vocabulary, scanned over time): completed before the loop, where its dtype is known (inside the body
    the psum could not cast it back, and a carry would change dtype: a raw JAX error)."""
    completed: list[Operand] = []
    purpose = f"{call.short}'s %s (a float32-formed partial sum is completed before the loop, where its dtype is known)"
    # (a partial init is completed before the loop by the carry's own fixpoint, with its dtype: _loop)
    xs = call.arg(2, "xs") if loop.stacked is not None else None
    if xs is not None and isinstance(xs.value, Array) and xs.value.layout.rank:
        done = rw.complete_widened(xs, purpose % "xs")
        if done is not xs:
            completed.append(done)
            layout = done.value.layout
            step = Array(Layout(layout.dims[1:], layout.axes[1:]), done.value.origin)
            loop = replace(loop, args=tuple(step if i == 1 else a for i, a in enumerate(loop.args)))
    return loop, completed


def _completed(rw, call: Call, branches: Branches) -> list[Operand]:
    return [rw.complete_widened(o, f"a {call.short} operand (a branch could not name its dtype)")
            for o in branches.operands]


def _branches(rw, call: Call, branches: Branches, operands: list[Operand]
              ) -> tuple[Value, dict[At, cst.BaseExpression]]:
    """Each branch walked for the operands to learn its result, then again with its result
    converted, inside the branch, to the layout every branch returns."""
    # (an operand that may be None, an array or None known only when traced, is so in every branch)
    args = [with_maybe_none(rw, o.value, maybe_none_paths(rw, given.value))
            for o, given in zip(operands, branches.operands)]
    passed = [o.original for o in operands]
    mark = rw.mark()
    results = [_walk(rw, call, b.fn, args, 1, passed=passed)[0] for b in branches.bodies]
    maybe = frozenset().union(*(maybe_none_paths(rw, r) for r in results))
    target = _common(rw, call, results)
    rw.rollback(mark)
    walked: dict[At, cst.BaseExpression] = {}
    dtypes: list = []
    for branch, result in zip(branches.bodies, results):
        need = None if signature_of(result) == signature_of(target) else target
        if need is not None and not isinstance(target, Array) and isinstance(branch.fn.original, cst.Name) \
                and local_def(rw, branch.fn.original.value) is not None:
            raise _unconverted(rw, call, branch.fn.original, result, target)
        walked[branch.at] = _walk(rw, call, branch.fn, args, 1, target=need, passed=passed, dtype=dtypes)[1]
    # JAX requires every branch to return the same dtypes: the first branch whose carriers are known says them
    rw.dtypes.calls[call.node] = next((d for d in dtypes if d is not None), None)
    return with_maybe_none(rw, target, maybe), walked  # (None where a branch's result may be: the others' too)


def _common(rw, call: Call, results: list[Value]) -> Value:
    """The layout every branch returns: per array, the splits of the branch with fewest pending
    partial sums, every partial sum completed inside its branch (where the names its dtype is read
    from exist; one psum runs either way, in the branch taken)."""
    from meshify.rewrite._interp import _common_layout

    first = results[0]
    if all(signature_of(r) == signature_of(first) for r in results[1:]) and not holds_partial(first):
        return first
    if all(isinstance(r, Array) for r in results):
        layout = _common_layout(results)
        if layout is not None:  # partial sums completed in the branch: it knows their dtypes
            return Array(layout.with_partial(()), first.origin)
    if all(isinstance(r, TupleValue) and len(r.items) == len(first.items) for r in results):
        return TupleValue(tuple(_common(rw, call, list(items)) for items in zip(*(r.items for r in results))))
    if all(isinstance(r, Static) for r in results):
        return Static()
    raise rw.error(LayoutError, call.node, f"the branches of this {call.short} return different dims: "
                   + "; ".join(_text(r) for r in results),
                   "return the same dims from every branch (JAX requires the same shapes too)")


def _unconverted(rw, call: Call, node: cst.CSTNode, result: Value, target: Value) -> Exception:
    return rw.error(LayoutError, node, f"this {call.short} branch returns {_text(result)}, the other branches "
                    f"{_text(target)}, and meshify can convert only a lambda's or a single array's result inside "
                    "the branch", "give the branches' results the same layouts (pin them with a return hint or a "
                    "Tensor hint before returning), or pass a lambda that calls the function")


def _convert_to(rw, op: Operand, target: Value, where: cst.CSTNode) -> Operand:
    """A branch's result converted, inside the branch, to the layout every branch returns."""
    value = op.value
    if signature_of(value) == signature_of(target):
        return op
    if isinstance(value, Array) and isinstance(target, Array):
        return Operand(target, op.original, rw.convert(op, target.layout, "the layout every branch returns"))
    if isinstance(value, Opaque | Static) and isinstance(target, Array) and not target.layout.is_split \
            and not target.layout.partial:  # the same on every device already (a while_loop's c[1] < 3)
        return Operand(target, op.original, op.node)
    if isinstance(value, TupleValue) and isinstance(target, TupleValue) and isinstance(op.original, cst.Tuple) \
            and isinstance(op.node, cst.Tuple) and len(op.original.elements) == len(value.items) == len(target.items):
        items = [_convert_to(rw, Operand(v, e.value, n.value), t, where)
                 for v, t, e, n in zip(value.items, target.items, op.original.elements, op.node.elements)]
        node = op.node.with_changes(elements=[e.with_changes(value=i.node) for e, i in zip(op.node.elements, items)])
        return Operand(TupleValue(tuple(i.value for i in items)), op.original, node)
    raise rw.error(LayoutError, where, f"this branch returns {_text(value)}, another {_text(target)}",
                   "return a tuple literal, (a, b), so that each item can be converted, or pin the items with "
                   "Tensor hints")


def _wide_item(result: Value, items) -> bool:
    """Whether a body's tuple result holds a partial sum accumulated in float32 (``items``: its
    items' (carriers, widened), see _dtypes)."""
    return isinstance(result, TupleValue) and items is not None and len(items) == len(result.items) \
        and any(w and holds_partial(v) for (_, w), v in zip(items, result.items))


def _text(value: Value) -> str:
    if isinstance(value, Array):
        return value.layout.describe()
    if isinstance(value, TupleValue):
        return "(" + ", ".join(_text(v) for v in value.items) + ")"
    return type(value).__name__.lower()


def is_partial(rw, node: cst.BaseExpression) -> bool:
    """``functools.partial(f, ...)`` with no ``*``/``**`` arguments (it is walked as a lambda)."""
    return isinstance(node, cst.Call) and bool(node.args) and not any(a.star for a in node.args) \
        and node.args[0].keyword is None and "functools.partial" in rw.ctx.qualified_names(node.func)


def partial_lambda(node: cst.Call, count: int) -> cst.Lambda:
    """``functools.partial(f, *bound, **kw)`` called with ``count`` arguments, as the lambda it stands for:
    ``lambda partial_arg0, ...: f(*bound, partial_arg0, ..., **kw)`` (its bound arguments are read where
    it was written, as the partial read them there, when the helper calls it at once)."""
    names = [f"partial_arg{i}" for i in range(count)]
    bound = [a for a in node.args[1:] if a.keyword is None]
    keywords = [a for a in node.args[1:] if a.keyword is not None]
    args = [*(a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in bound),
            *(cst.Arg(cst.Name(n)) for n in names),
            *(a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in keywords)]
    return cst.Lambda(cst.Parameters([cst.Param(cst.Name(n)) for n in names]),
                      cst.Call(node.args[0].value, args))


# -- walking one body: a nested def, a module helper or a lambda ---------------------------------------


#: Wrappers of a body that leave what it computes as it is: the body inside is walked, the wrapper kept.
BODY_WRAPPERS = frozenset({"jax.checkpoint", "jax.remat", "jax.jit", "jax.named_call"})


def unwrapped(rw, node: cst.BaseExpression) -> tuple[list[cst.Call], cst.BaseExpression]:
    """``jax.checkpoint(step, policy=...)`` (nested too): the wrapper calls, outermost first, and the body."""
    wrappers = []
    while isinstance(node, cst.Call) and node.args and node.args[0].keyword is None and not node.args[0].star \
            and isinstance(node.func, cst.Name | cst.Attribute) and rw.ctx.qualified_names(node.func) & BODY_WRAPPERS:
        wrappers.append(node)
        node = node.args[0].value
    return wrappers, node


@dataclass(frozen=True, slots=True)
class Sources:
    """Where a loop body's arguments come from (see ``Loop.sources``), and which one is the carry (``pair``: the
    body returns ``(carry, y)``, a scan's)."""

    nodes: tuple[cst.CSTNode | None, ...]
    carry: int
    pair: bool

    def carry_of(self, params: list[str]) -> tuple[str, bool] | None:
        return (params[self.carry], self.pair) if self.carry < len(params) else None


def _walk(rw, call: Call, fn: Operand, args: list[Value], trips, target: Value | None = None,
          passed: list[cst.BaseExpression] | None = None, dtype: list | None = None, unroll: int | bool = 1,
          sources: Sources | None = None) -> tuple[Value, cst.BaseExpression]:
    """Rewrites the loop (or branch) body for ``args``; returns its result value and the body's new node.

    ``target``: the value the result must leave the body as (a cond's branches agree on one); it is
    converted inside the body.  ``passed``: the caller's nodes of ``args``, for their dtypes; the
    result's dtype carriers, in the caller's names, are appended to ``dtype``.  A body under
    ``jax.checkpoint`` (``jax.remat``, ``jax.jit``) is walked inside it, the wrapper kept."""
    wrappers, inner = unwrapped(rw, fn.original)
    if wrappers:
        value, new = _walk(rw, call, replace(fn, original=inner, node=inner), args, trips, target, passed, dtype,
                           unroll, sources)
        for w in reversed(wrappers):
            new = w.with_changes(args=[w.args[0].with_changes(value=new), *w.args[1:]])
        return value, new
    node = fn.original
    rw.enter_loop(TracedLoop(trips, unroll, next(_BODIES)))
    try:
        local = local_def(rw, node.value) if isinstance(node, cst.Name) else None
        if local is not None:  # def body(carry, x): ... in the enclosing function
            return _local_body(rw, call, local, args, target, passed, dtype, sources)
        held = rw.env.get(node.value) if isinstance(node, cst.Name) else None
        if isinstance(held, Static) and isinstance(held.literal, LambdaRef | LocalRef):
            return _passed_body(rw, call, node, held.literal, args, target, dtype)
        if isinstance(node, cst.Name) and node.value in rw.ctx.functions:
            return _helper_body(rw, call, node, args, target, passed, dtype)
        imported = imported_helper(rw, node) if isinstance(node, cst.Name | cst.Attribute) else None
        if imported is not None:  # from .layers import block: another module's helper (_imports)
            return _helper_body(rw, call, node, args, target, passed, dtype, imported)
        if is_partial(rw, node):  # functools.partial(block, cfg=cfg): the lambda it stands for
            node = partial_lambda(node, len(args))
        if isinstance(node, cst.Lambda):
            return walk_lambda(rw, node, args, target, "the loop body's" if target is None and passed is None
                           else f"the {call.short} branch's", passed, dtype, sources)
    finally:
        rw.leave_loop()
    raise rw.error(UnsupportedError, node, f"{call.short} body {rw.ctx.code(node)!r}",
                   "pass a function defined with def (here or at module level), or a lambda")


def _helper_body(rw, call: Call, node: cst.Name | cst.Attribute, args: list[Value], target: Value | None,
                 passed: list[cst.BaseExpression] | None, dtype: list | None, imported=None
                 ) -> tuple[Value, cst.BaseExpression]:
    """A module helper as the body: its version for ``args``; a result to convert (a cond branch)
    is converted in a lambda around the version, ``lambda *branch_args: mr.psum(f__v(*branch_args), ...)``.
    ``imported``: ``(module, def)`` of a helper another module defines."""
    home, helper = imported if imported is not None else (None, rw.ctx.functions[node.value])  # type: ignore[union-attr]
    originals = passed if passed is not None else [cst.Name("_") for _ in args]
    fake = Call(cst.Call(func=node, args=[cst.Arg(o) for o in originals]), helper.name.value,
                tuple(Operand(v, o, o) for v, o in zip(args, originals)), {})
    # a loop body's caller cannot name its result's dtype: a float32-accumulated partial sum is completed inside
    result, new_call = call_helper(rw, fake, helper, home, blind=passed is None)
    if dtype is not None:
        dtype.append(rw.dtypes.of(fake.node))
    if target is None or signature_of(result) == signature_of(target):
        if target is None and passed is None and holds_partial(result) and (
                fake.node in rw.dtypes.widened or _wide_item(result, rw.dtypes.call_items.get(fake.node))):
            raise rw.error(UnsupportedError, node, f"{helper.name.value}() returns a partial sum accumulated in "
                           f"float32 out of a {call.short} body, and meshify cannot name the dtype to cast it back to "
                           f"there", f"reduce it inside {helper.name.value}() (give it a return hint)")
        return result, new_call.func
    star = cst.Name("branch_args")
    inner = cst.Call(new_call.func, [cst.Arg(star, star="*")])
    converted = _convert_to(rw, Operand(result, fake.node, inner), target, node)
    return converted.value, cst.Lambda(cst.Parameters(star_arg=cst.Param(star, star="*")), converted.node)


def _passed_body(rw, call: Call, node: cst.BaseExpression, ref: Any, args: list[Value],
                 target: Value | None,
                 dtype: list | None) -> tuple[Value, cst.BaseExpression]:
    """A helper's loop body its caller passed in (``ref``: its LambdaRef or LocalRef; ``scan(step, h, ws)``,
    ``step`` a lambda, a partial or a
    nested def of the caller): walked where it was written, for the values this loop passes it (its records
    run inside this helper's loops); the helper's code keeps the name it has for it (the caller's argument
    is the walked code: one code for every use)."""
    from meshify.rewrite._evaluate import _records_run_here

    owner = ref.owner
    start = len(owner.records)
    operands = [o for o in call.args if isinstance(o.value, Array | TupleValue)]
    if isinstance(ref, LocalRef):
        value, _name = _local_body(owner, call, ref.local, args, target)
        value = with_maybe_none(rw, value, maybe_none_paths(owner, value))  # (marked in its writer's scope)
        _records_run_here(rw, owner, start, ref.local.node, operands)  # type: ignore[attr-defined]
        if dtype is not None:
            dtype.append(None)  # its result's dtype is named in its writer's scope, not here
        return value, node
    lam = partial_lambda(ref.node, len(args)) if ref.partial else ref.node
    value, new = walk_lambda(owner, lam, args, target, f"the {call.short} body passed to {'.'.join(rw.stack[-1:])}()'s")
    _records_run_here(rw, owner, start, ref.node, operands)
    code = owner.ctx.code(new)
    if ref.walked and ref.walked[0][0] != code:
        raise rw.error(UnsupportedError, node, f"the {call.short} body passed in needs other code here than at its "
                       "first use (other layouts)", "pass a module-level def instead (it is specialised per use)")
    ref.walked.append((code, new))
    if dtype is not None:
        dtype.append(None)
    return with_maybe_none(rw, value, maybe_none_paths(owner, value)), node


def _local_body(rw, call: Call, local, args: list[Value], target: Value | None = None,
                passed: list[cst.BaseExpression] | None = None, dtype: list | None = None,
                sources: Sources | None = None) -> tuple[Value, cst.BaseExpression]:
    """A nested def as the loop body: rewritten where the loop traces it, in the enclosing scope."""
    local.shape(len(args))
    p = local.node.params
    positional = [q.name.value for q in (*p.posonly_params, *p.params)]
    if len(positional) < len(args):
        raise rw.error(UnsupportedError, local.node, f"{local.name}() takes {len(positional)} arguments but "
                       f"{call.short} passes it {len(args)}",
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
                               f"{call.short} calls it", f"give {name!r} a default")
            bound[name] = local.defaults[name]
            if carriers is not None:
                carriers[name] = local.default_dtypes.get(name)
    forced = target.layout if isinstance(target, Array) else None
    result, sub, name = walk_local(rw, local, bound, call.node, carriers, forced=forced, blind=passed is None,
                                   passed=dict(zip(positional, sources.nodes)) if sources is not None else None,
                                   carry=sources.carry_of(positional) if sources is not None else None)
    result = with_maybe_none(rw, result, sub.maybe_results)  # (what it returns that may be None, in rw's terms)
    if dtype is not None:
        dtype.append(sub.dtypes.in_caller(sub.return_dtype, carriers or {}))
    if passed is None and holds_partial(result) and (sub.returns_widened or _wide_item(result, sub.return_items)):
        raise rw.error(UnsupportedError, local.node, f"{local.name}() returns a partial sum accumulated in float32 "
                       f"out of a {call.short} body, and meshify cannot name the dtype to cast it back to there",
                       f"reduce it inside {local.name}() (pin it with a Tensor hint before returning)")
    return result, name


def walk_lambda(rw, node: cst.Lambda, args: list[Value], target: Value | None = None,
            what: str = "the loop body's", passed: list[cst.BaseExpression] | None = None,
            dtype: list | None = None, sources: Sources | None = None) -> tuple[Value, cst.BaseExpression]:
    """A lambda walked for ``args`` in the caller's scope (its parameters bound over the caller's
    names while its body is evaluated); its result converted to ``target``, if given."""
    params = [p.name.value for p in node.params.params]
    if sources is not None and rw.tangent is not None:  # its parameters fed from values with a cotangent
        from meshify.rewrite._cotangents import seeded_params

        saved_tangent = rw.tangent
        rw.tangent = rw.tangent | seeded_params(rw, node, dict(zip(params, sources.nodes)),
                                                sources.carry_of(params))
        try:
            return walk_lambda(rw, node, args, target, what, passed, dtype)
        finally:
            rw.tangent = saved_tangent
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
