"""Function transforms applied at the call site: ``jax.checkpoint(f)(...)``, ``jax.remat(f)(...)``,
``jax.jit(f)(...)`` and ``jax.vmap(f, in_axes=...)(...)`` inside a function being rewritten.

``f`` (a module helper, a nested def or a lambda) is rewritten for the values it is called with,
as a direct call would be, and the transform is kept around its version
(``jax.checkpoint(block__batch_x)(x, w)``).  Under ``vmap`` each mapped operand loses its mapped
dim before ``f`` sees it, and the result gets it back at ``out_axes``, split as the operands had
it: mapping over a split batch is local (each device maps over its own rows).

After this pass a transformed call is a call of the transform of ``f``'s version, its operands
converted as ``f``'s body needs them.
"""

from __future__ import annotations

import libcst as cst

from meshify.annotate._types import Layout
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._collectives import axes_text, collective
from meshify.rewrite._cotangents import BACKWARD, seeded
from meshify.rewrite._values import Array, Opaque, Operand, Static, StructValue, TupleValue, Value, holds_partial

__all__ = ["TRANSFORMS", "transformed_call"]

#: The transforms a call site may apply to a helper, nested def or lambda.
TRANSFORMS = frozenset({"jax.checkpoint", "jax.remat", "jax.vmap", "jax.jit", "jax.grad", "jax.value_and_grad",
                        "jax.named_call"})


def transformed_call(rw, node: cst.Call, kind: str):
    """``jax.checkpoint(f)(args)`` / ``jax.vmap(f, ...)(args)``: ``f`` rewritten for ``args``."""
    from meshify.rewrite._evaluate import _evaluate_args

    inner = node.func
    assert isinstance(inner, cst.Call)
    short = kind.rsplit(".", 1)[-1]
    if not inner.args or inner.args[0].keyword is not None:
        raise rw.error(UnsupportedError, inner, f"{short}() without the function as its first argument",
                       f"write {short}(f, ...)(args)")
    options = {a.keyword.value if a.keyword is not None else i: rw.expr(a.value) for i, a in enumerate(inner.args)
               if i > 0 or a.keyword is not None}
    for op in options.values():
        if not isinstance(op.value, Static):
            raise rw.error(UnsupportedError, op.original, f"{short}() option {rw.ctx.code(op.original)!r} is an array",
                           "pass static options (policy=..., in_axes=0, ...)")
    fn = inner.args[0].value
    nested = next((n for n in sorted(rw.ctx.qualified_names(fn.func)) if n in TRANSFORMS), None) \
        if isinstance(fn, cst.Call) and isinstance(fn.func, cst.Name | cst.Attribute) else None
    if nested is not None and kind in ("jax.jit", "jax.checkpoint", "jax.remat", "jax.named_call"):
        # jax.jit(jax.grad(loss))(params, x): the inner transform's call rewritten, the outer kept around it
        # (jit inside the shard_map changes no value; a checkpoint only what is saved)
        synthetic = cst.Call(func=fn, args=node.args)
        inside = transformed_call(rw, synthetic, nested)
        assert isinstance(inside.node, cst.Call)
        dtypes = rw.dtypes  # what the inner call's dtypes say, said of the user's call (its result's dtype)
        for known in (dtypes.calls, dtypes.call_items, dtypes.spelled):
            if synthetic in known:
                known[node] = known[synthetic]
        if synthetic in dtypes.widened:
            dtypes.widened.add(node)
        new_args = [inner.args[0].with_changes(value=inside.node.func)]
        for i, a in enumerate(inner.args[1:], 1):
            new_args.append(a.with_changes(value=options[a.keyword.value if a.keyword is not None else i].node))
        return Operand(inside.value, node, node.with_changes(func=inner.with_changes(args=new_args),
                                                             args=inside.node.args))
    direct = _partial_called_directly(rw, node, fn, kind)
    if direct is not None:
        # jax.checkpoint(functools.partial(block, w=w))(x) as jax.checkpoint(block)(x, w=w): the helper's own call,
        # whose results' dtypes meshify follows (through the lambda a partial stands for, it could not)
        inside = transformed_call(rw, direct, kind)
        dtypes = rw.dtypes
        for known in (dtypes.calls, dtypes.call_items, dtypes.spelled):
            if direct in known:
                known[node] = known[direct]
        if direct in dtypes.widened:
            dtypes.widened.add(node)
        return Operand(inside.value, node, inside.node)
    call = _evaluate_args(rw, node, rw.ctx.code(fn), None)
    if kind == "jax.vmap":
        value, new_fn, args = _vmap(rw, node, fn, call, options)
    elif kind in ("jax.grad", "jax.value_and_grad"):
        value, new_fn, args = _grad(rw, node, fn, call, options, kind)
    else:
        value, new_fn, args = _walk(rw, fn, call)
    new_inner_args = [inner.args[0].with_changes(value=new_fn)]
    for i, a in enumerate(inner.args[1:], 1):  # options are static: as written, sizes of split dims global
        new_inner_args.append(a.with_changes(value=options[a.keyword.value if a.keyword is not None else i].node))
    new_inner = inner.with_changes(args=new_inner_args)
    return Operand(value, node, node.with_changes(func=new_inner, args=args))


def _partial_called_directly(rw, node: cst.Call, fn: cst.BaseExpression, kind: str) -> cst.Call | None:
    """``jax.checkpoint(functools.partial(f, *bound, **kw))(args)`` (``jax.remat``, ``jax.jit``,
    ``jax.named_call``) as ``jax.checkpoint(f)(*bound, args, **kw)`` where ``f`` is a name and every bound value a
    name holding an array (a traced argument either way; a Python value bound there must stay static, so that
    partial is walked as the lambda it stands for).  None otherwise."""
    from meshify.rewrite._bodies import is_partial

    if kind not in ("jax.checkpoint", "jax.remat", "jax.jit", "jax.named_call") or not is_partial(rw, fn) \
            or not isinstance(fn.args[0].value, cst.Name) or any(a.star for a in node.args):
        return None
    bound = fn.args[1:]
    if not bound or not all(isinstance(a.value, cst.Name) and isinstance(rw.env.get(a.value.value), Array)
                            for a in bound):
        return None
    inner = node.func
    plain = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in bound]
    args = [*(a for a in plain if a.keyword is None),
            *(a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in node.args),
            *(a for a in plain if a.keyword is not None)]
    return node.with_changes(func=inner.with_changes(args=[inner.args[0].with_changes(value=fn.args[0].value),
                                                          *inner.args[1:]]), args=args)


def _walk(rw, fn: cst.BaseExpression, call) -> tuple[Value, cst.BaseExpression, list[cst.Arg]]:
    """``fn`` rewritten for ``call``'s operands: its result, its new node, the call's new arguments."""
    from meshify.rewrite._helpers import call_helper, imported_helper
    from meshify.rewrite._nested import call_local, local_def

    local = local_def(rw, fn.value) if isinstance(fn, cst.Name) else None
    if local is not None:
        value, new = call_local(rw, local, call)
        return value, new.func, list(new.args)
    if isinstance(fn, cst.Name) and fn.value in rw.ctx.functions and fn.value not in rw.ctx.imports.imports \
            and fn.value not in rw.env:
        value, new = call_helper(rw, call, rw.ctx.functions[fn.value])
        return value, new.func, list(new.args)
    imported = imported_helper(rw, fn) if isinstance(fn, cst.Name | cst.Attribute) else None
    if imported is not None:  # jax.checkpoint(layers.block)(x): another module's helper (_imports)
        value, new = call_helper(rw, call, imported[1], imported[0])
        return value, new.func, list(new.args)
    from meshify.rewrite._evaluate import held_method, method_call, method_function, own_method

    method = own_method(rw, fn) if isinstance(fn, cst.Attribute) else (held_method(rw, fn) or own_method(rw, fn)) \
        if isinstance(fn, cst.Name) else None  # (jax.checkpoint(m)(x), m a pytree module: its __call__)
    if method is not None:  # jax.checkpoint(self.block)(x): the method's version, its receiver bound and checked
        value, new, _ = method_call(rw, call.node, method, call)
        takes = method.receiver is not None and not method.static
        return value, method_function(rw, method, new.func), list(new.args[1:] if takes else new.args)
    from meshify.rewrite._bodies import is_partial, partial_lambda, walk_lambda

    if is_partial(rw, fn) and not call.kwargs:  # jax.vmap(functools.partial(loss, w=w)): the lambda it stands for
        fn = partial_lambda(fn, len(call.args))
    if isinstance(fn, cst.Lambda):

        if call.kwargs:
            raise rw.error(UnsupportedError, call.node, "keyword arguments to a transformed lambda",
                           "pass the lambda's arguments positionally")
        value, new = walk_lambda(rw, fn, [o.value for o in call.args], what="the lambda's")
        body = fn.body
        if isinstance(value, TupleValue) and holds_partial(value) and not isinstance(body, cst.Tuple | cst.List) \
                and any(w for _, w in rw.dtypes.items_of(body, value) or ((None, True),)):
            # (a call's tuple: its items cannot be completed one by one in the lambda without calling it twice,
            # and outside it their dtype is lost: a bfloat16 partial sum formed in float32 would leave as float32)
            raise rw.error(UnsupportedError, body, f"the lambda's result {rw.ctx.code(body)!r} is a tuple holding a "
                           "partial sum, which meshify forms in float32 for float16/bfloat16 inputs and cannot "
                           "complete in its own dtype once it leaves the lambda",
                           "call the function by its name (jax.checkpoint(block)(x, w)), or bind the lambda or "
                           "partial to a name first (f = functools.partial(block, w=w)) and pass the name")
        return value, new, [a.with_changes(value=o.node) for a, o in zip(call.node.args, call.args)]
    raise rw.error(UnsupportedError, fn, f"{rw.ctx.code(fn)!r} is not a function meshify can follow into", "pass a helper defined with def (here or at module "
                   "level), or a lambda")


def _grad(rw, node: cst.Call, fn: cst.BaseExpression, call, options: dict, kind: str):
    """``jax.grad(loss)(params, x)`` / ``jax.value_and_grad(loss, argnums=(0, 1), has_aux=True)(...)`` inside the
    @mesh function: ``loss`` rewritten for the operands, differentiated inside the shard_map as written.  Each
    device's loss may be its partial sum (a mean over a split batch): the gradient of the partial losses is the
    gradient of their sum, as shard_map transposes its collectives (a replicated parameter's cotangents are
    psummed, a split one's stay its block).  So each gradient has its argument's layout, whole; the value keeps
    the loss's layout (completed where it is used).  A partial sum passed as an argument is completed first."""
    from dataclasses import replace

    for key, op in options.items():
        if key not in ("argnums", "has_aux", 1, 2):
            raise rw.error(UnsupportedError, op.original, f"{kind.rsplit('.', 1)[1]} option {key!r} is not modelled "
                           "by meshify", "drop it, or differentiate outside the @mesh function")
    argnums = _literal(rw, options.get(1, options.get("argnums")), 0, "argnums")
    has_aux = _literal(rw, options.get(2, options.get("has_aux")), False, "has_aux")
    if call.kwargs:
        raise rw.error(UnsupportedError, node, f"keyword arguments to a {kind.rsplit('.', 1)[1]} function",
                       "pass them positionally")
    nums = list(argnums) if isinstance(argnums, tuple | list) else [argnums]
    if not all(isinstance(i, int) and -len(call.args) <= i < len(call.args) for i in nums):
        raise rw.error(LayoutError, node, f"argnums={argnums!r} for {len(call.args)} arguments",
                       "name arguments that are passed")
    nums = [i % len(call.args) for i in nums]
    args = list(call.args)
    for i in nums:  # a partial sum differentiated with respect to: completed first (its pieces are not inputs)
        if holds_partial(args[i].value):
            args[i] = _whole(rw, args[i], f"{kind}'s argument {i}")
    start = len(rw.records)
    # (which values of the walk have a cotangent: the backward pass all-reduces those JAX broadcast; _cotangents)
    saved = rw.grad_args, rw.tangent
    if isinstance(fn, cst.Lambda):  # walked in this scope: its parameters differentiated, and what they compute
        params = [p.name.value for p in fn.params.params]
        seeds = {params[i] for i in nums if i < len(params)}
        more = rw.tangent or frozenset()
        rw.tangent = seeded(fn, seeds | more)
    else:
        rw.grad_args = [a.original for i, a in enumerate(args) if i in nums]
    try:
        value, new_fn, new_args = _walk(rw, fn, replace(call, args=tuple(args)))
    finally:
        rw.grad_args, rw.tangent = saved
    loss = value.items[0] if has_aux and isinstance(value, TupleValue) and len(value.items) == 2 else value
    last = len(rw.records) - 1
    _backward_records(rw, start)
    if kind == "jax.grad" and not has_aux and last >= start and rw.records[last].kind == "psum" \
            and not rw.records[last].layout.rank:
        # the loss made whole last: jax.grad returns only the gradients, so XLA drops that psum (its transpose moves
        # nothing); explain counts what the compiled program runs (the comment still shows the call)
        del rw.records[last]
    if has_aux and loss is value:
        raise rw.error(LayoutError, fn, f"{rw.ctx.code(fn)} returns one value but has_aux=True",
                       "return (loss, aux)")
    if not (isinstance(loss, Array) and loss.layout.rank == 0):
        raise rw.error(LayoutError, fn, f"{rw.ctx.code(fn)} returns {_describe(loss)}, not a scalar array, under "
                       f"{kind}", "return one scalar: the loss (jnp.mean(...), jnp.sum(...))")
    grads = [_gradient_of(args[i].value) for i in nums]
    out: Value = grads[0] if isinstance(argnums, int) else TupleValue(tuple(grads))
    if has_aux:
        out = TupleValue((out, value.items[1])) if kind == "jax.grad" else out  # type: ignore[union-attr]
    if kind == "jax.value_and_grad":
        out = TupleValue((value, out))
    return out, new_fn, new_args


def _backward_records(rw, start: int) -> None:
    """The collectives the gradient adds inside the shard_map, for ``explain`` (and ``verify``'s count), beside
    the psums of cotangents JAX broadcast (``_cotangents``, recorded while walking): a weight the loss
    all-gathered is reduce-scattered back.  Each is commented at the call."""
    from dataclasses import replace

    # (a parameter meeting activations split over 'data' is broadcast there: its psum is data parallelism's)
    rw._comments.extend(dict.fromkeys(r.reason for r in rw.records[start:] if r.kind == "psum"
                                      and BACKWARD in r.reason))
    for r in list(rw.records[start:]):
        if r.kind == "all_gather" and r.dim:
            d = r.layout.dims.index(r.dim)
            gathered = Layout(r.layout.dims, tuple(() if j == d else a for j, a in enumerate(r.layout.axes)))
            rw.records.append(replace(r, kind="psum_scatter", layout=gathered, value=None,
                                      reason=f"psum_scatter over {axes_text(r.axes)}: the gradient of what was "
                                             f"all-gathered along {r.dim!r} for the loss, reduce-scattered back"))


def _whole(rw, operand: Operand, purpose: str) -> Operand:
    if not isinstance(operand.value, Array):
        raise rw.error(UnsupportedError, operand.original, f"differentiating with respect to "
                       f"{rw.ctx.code(operand.original)!r}, which holds a partial sum",
                       "name it first (v: Tensor[...] = ...), so that it is summed, then pass v")
    whole = operand.value.layout.with_partial(())
    return Operand(Array(whole, ""), operand.original, rw.convert(operand, whole, purpose))


def _gradient_of(value: Value) -> Value:
    """The gradient's value for an argument: its layout, whole (its dtype too); a pytree's field by field."""
    if isinstance(value, Array):
        return Array(value.layout.with_partial(()))
    if isinstance(value, TupleValue):
        return TupleValue(tuple(_gradient_of(v) for v in value.items))
    if isinstance(value, StructValue):
        return StructValue(value.cls, tuple((k, _gradient_of(v)) for k, v in value.fields), value.kind)
    return value  # (a static argument's gradient is JAX's error, as on one device)


def _describe(value: Value) -> str:
    if isinstance(value, Array):
        return f"an array of dims {list(value.dims)}"
    return type(value).__name__.lower()


def _vmap(rw, node: cst.Call, fn: cst.BaseExpression, call, options: dict):
    """The operands without their mapped dims; ``fn`` walked; the mapped dim put back at ``out_axes``."""
    from dataclasses import replace

    positional = len(call.args)
    in_axes = _literal(rw, options.get(1, options.get("in_axes")), 0, "in_axes")
    out_axes = _literal(rw, options.get(2, options.get("out_axes")), 0, "out_axes")
    for key, op in options.items():
        if key not in (1, 2, "in_axes", "out_axes"):
            raise rw.error(UnsupportedError, op.original, f"vmap option {key!r} is not modelled by "
                           "meshify", "drop it, or call jax.vmap outside the @mesh function")
    if call.kwargs:
        raise rw.error(UnsupportedError, node, "keyword arguments to a vmapped function",
                       "pass them positionally (vmap maps positional arguments)")
    axes = list(in_axes) if isinstance(in_axes, list | tuple) else [in_axes] * positional
    if len(axes) != positional:
        raise rw.error(LayoutError, node, f"in_axes names {len(axes)} arguments but {positional} are passed",
                       "give in_axes one entry per argument")
    mapped: tuple[str, tuple[str, ...]] | None = None
    args = []
    for operand, axis in zip(call.args, axes):
        if axis is None:
            args.append(operand)
            continue
        if not isinstance(operand.value, Array) or not isinstance(axis, int):
            code = rw.ctx.code(operand.original)
            fix = "map over arrays only (in_axes=None for others)"
            if isinstance(operand.value, Opaque) and isinstance(axis, int):  # keys = jax.random.split(key, B)
                name = code if code.isidentifier() else "mapped"
                fix = (f"name its dims where it is made ({name}: Tensor[\"batch\", ...] = ..., the dim mapped over "
                       "named as the other arguments' is), or pass it with in_axes=None if it is not to be mapped")
            raise rw.error(UnsupportedError, operand.original, f"vmap over {code!r}, which is not an array with "
                           "named dims", fix)
        layout = operand.value.layout
        if not -layout.rank <= axis < layout.rank:
            raise rw.error(LayoutError, operand.original, f"in_axes={axis} of an array with {layout.rank} dims",
                           "map over one of its dims")
        axis %= layout.rank
        target, dim = _mapped_split(call, axes)
        if target and layout.dims[axis] == dim and not layout.axes[axis] and not set(target) & layout.split_axes \
                and not layout.partial:
            # per-example keys (jax.random.split(key, B)) or a whole table mapped beside split rows: each device
            # takes its block of them (a local slice, no communication)
            layout = Layout(layout.dims, layout.axes[:axis] + (target,) + layout.axes[axis + 1:])
            operand = Operand(Array(layout, operand.value.origin), operand.original,
                              rw.convert(operand, layout, "vmap's mapped dim, split as the other arguments' is"))
        this = (layout.dims[axis], layout.axes[axis])
        if mapped is not None and this[1] != mapped[1]:
            raise rw.error(LayoutError, operand.original, f"vmap maps dim {this[0]!r} (split over "
                           f"{this[1] or 'no axis'}) beside dim {mapped[0]!r} (split over {mapped[1] or 'no axis'})",
                           "give the mapped dims the same split (pin them with Tensor hints)")
        mapped = mapped or this
        sliced = Layout(layout.dims[:axis] + layout.dims[axis + 1:], layout.axes[:axis] + layout.axes[axis + 1:],
                        layout.partial)
        args.append(Operand(Array(sliced, operand.value.origin), operand.original, operand.node))
    if mapped is None:
        raise rw.error(LayoutError, node, "vmap with every in_axes None", "map at least one argument")
    start = len(rw.records)
    value, new_fn, new_args = _walk(rw, fn, replace(call, args=tuple(args)))
    _no_collective_across_rows(rw, node, rw.records[start:], mapped)
    carriers = rw.dtypes.calls.get(node)
    result = _put_back(rw, node, value, mapped, out_axes)
    if carriers is not None:
        rw.dtypes.calls[node] = carriers
    return result, new_fn, new_args


def _no_collective_across_rows(rw, node: cst.Call, records, mapped: tuple[str, tuple[str, ...]]) -> None:
    """Refuses a collective the vmapped function runs over the mesh axes its mapped dim is split over on a value of
    its arguments (a lambda's parameter read: see ``_record_scope``): the devices hold different rows, so a sum or
    gather across them mixes rows (``lambda x: w_split @ x`` with the rows and ``w``'s contracted dim on one axis)."""
    dim, axes = mapped
    for r in records:
        if r.value is None and set(r.axes) & set(axes) and collective(r.kind).hlo is not None:
            raise rw.error(LayoutError, node, f"the vmapped function runs {r.kind} over {axes_text(r.axes)} on "
                           f"rows of its arguments ({r.reason}), where the mapped dim {dim!r} is split over "
                           f"{axes_text(axes)}: each device holds other rows, and the {r.kind} would mix them",
                           f"map {r.dim!r} to no mesh axis (rules={{{r.dim!r}: None}}) or to another than "
                           f"{axes_text(axes)}, or split {dim!r} over another mesh axis" if r.dim else
                           f"map the dims the function splits over {axes_text(r.axes)} (the one its {r.kind} "
                           f"completes) to no mesh axis (rules={{...: None}}), or split {dim!r} over another mesh "
                           "axis")


def _mapped_split(call, axes) -> tuple[tuple[str, ...], str | None]:
    """The mesh axes the first argument mapped along a split dim splits it over, and that dim (``()``: none is
    split)."""
    for operand, axis in zip(call.args, axes):
        if isinstance(operand.value, Array) and isinstance(axis, int) and -operand.value.layout.rank <= axis \
                < operand.value.layout.rank and operand.value.layout.axes[axis]:
            return operand.value.layout.axes[axis], operand.value.layout.dims[axis]
    return (), None


def _put_back(rw, node: cst.Call, value: Value, mapped: tuple[str, tuple[str, ...]], out_axes) -> Value:
    if isinstance(value, TupleValue):
        outs = list(out_axes) if isinstance(out_axes, list | tuple) else [out_axes] * len(value.items)
        return TupleValue(tuple(_put_back(rw, node, v, mapped, o) for v, o in zip(value.items, outs)))
    dim, axes = mapped
    if isinstance(value, Opaque) and isinstance(out_axes, int):
        if not axes and value.shape is None:
            return value  # rows of a dim split over no axis, whole on every device: the stack is too
        raise rw.error(UnsupportedError, node, f"the vmapped function returns an array of dims meshify cannot "
                       f"infer, mapped along {dim!r}, split over {axes_text(axes)}: each device holds other rows "
                       "of it", "name the dims of one row of its result: y: Tensor[...] = ... before returning y")
    if not isinstance(value, Array) or not isinstance(out_axes, int):
        raise rw.error(UnsupportedError, node, "a vmapped function returning a value meshify cannot map back",
                       "return arrays (out_axes an int)")
    layout = value.layout
    if set(axes) & layout.partial:
        raise rw.error(LayoutError, node, f"the vmapped function returns a partial sum over {sorted(layout.partial)}, "
                       f"the axes the mapped dim {dim!r} is split over", "reduce it inside the function")
    clash = next((k for k, a in enumerate(layout.axes) if set(a) & set(axes)), None)
    if clash is not None:
        # (each device holds its rows' block of that dim only where the row block and the dim block coincide)
        other = layout.dims[clash]
        raise rw.error(LayoutError, node, f"the vmapped function returns dims {list(layout.dims)} with {other!r} split "
                       f"over {axes_text(layout.axes[clash])} (from a value it closes over or computes), the mesh axes "
                       f"the mapped dim {dim!r} is split over: each device holds one block of the rows and another "
                       f"of {other!r}", f"map {other!r} to no mesh axis (rules={{{other!r}: None}}) or to another "
                       f"than {axes_text(axes)}, or split {dim!r} over another mesh axis")
    at = out_axes % (layout.rank + 1) if out_axes < 0 else out_axes
    return Array(Layout(layout.dims[:at] + (dim,) + layout.dims[at:], layout.axes[:at] + (axes,) + layout.axes[at:],
                        layout.partial), value.origin)


def _literal(rw, op: Operand | None, default, what: str):
    if op is None:
        return default
    value = op.value
    if isinstance(value, Static) and value.known and (value.literal is None or isinstance(value.literal, int) or (
            isinstance(value.literal, tuple | list) and all(v is None or isinstance(v, int) for v in value.literal))):
        return value.literal
    raise rw.error(UnsupportedError, op.original, f"{what}={rw.ctx.code(op.original)}: meshify maps over literal "
                   "axes only", f"write {what} as an int, None, or a tuple of them")
