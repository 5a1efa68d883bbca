"""Reductions and the softmax family over named dims.

sum/mean over a split dim: local + deferred psum (mean divided by the shard count);
max/min: one runtime call (pmax/pmin, ties sharing the gradient across devices);
softmax/log_softmax/logsumexp over a split dim: local max, pmax, local sum of exp, psum.
"""

from __future__ import annotations

from dataclasses import replace

from meshify.annotate._types import BROADCAST, INFERRED, Layout, hint_dims
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._collectives import axes_text
from meshify.rewrite._values import Array, Opaque, Static, TupleValue
from meshify.rewrite.rules._api import (
    At,
    Call,
    Convert,
    Emitted,
    Lowering,
    MeshAxes,
    Ref,
    RuleContext,
    Template,
    op,
    unknown_call,
)

# -- reductions -------------------------------------------------------------------------------


def _reduced_dims(ctx: RuleContext, call: Call, layout: Layout, axis_operand, default_all: bool = True) -> list[int]:
    if axis_operand is None:  # (omitted: the op's default, all dims or the last: softmax's axis=-1)
        return list(range(layout.rank)) if default_all else [layout.rank - 1]
    if isinstance(axis_operand.value, Static) and axis_operand.value.known and axis_operand.value.literal is None:
        return list(range(layout.rank))  # axis=None written: every dim (softmax(x, axis=None) too)
    value = axis_operand.value
    if not (isinstance(value, Static) and value.known):
        raise ctx.error(UnsupportedError, axis_operand.original,
                        f"axis={ctx.code(axis_operand.original)} of {call.name} is not a literal",
                        "write the axis as an int literal, e.g. axis=-1, so that meshify knows which dim it reduces")
    axes = value.literal if isinstance(value.literal, tuple) else (value.literal,)
    out = []
    for a in axes:
        if not isinstance(a, int) or not -layout.rank <= a < layout.rank:
            raise ctx.error(LayoutError, axis_operand.original,
                            f"axis {a!r} is out of range for a value of dims {list(layout.dims)}",
                            f"use an axis from {-layout.rank} to {layout.rank - 1}")
        out.append(a % layout.rank)
    return sorted(set(out))


#: The parameters of ``jnp.sum``/``mean``/``max``/``min`` after the array, in positional order
#: (the method forms ``x.sum(...)`` take the same ones).
_REDUCE_PARAMS = {
    "sum": ("axis", "dtype", "out", "keepdims", "initial", "where"),
    "mean": ("axis", "dtype", "out", "keepdims"),
    "max": ("axis", "out", "keepdims", "initial", "where"),
    "min": ("axis", "out", "keepdims", "initial", "where"),
}


def _reduce_arg(call: Call, kind: str, name: str):
    """The operand a reduction got for parameter ``name``, positionally or by keyword (or None)."""
    params = _REDUCE_PARAMS[kind]
    if name not in params:
        return call.kwargs.get(name)
    offset = 0 if call.receiver is not None else 1
    return call.arg(offset + params.index(name), name)


def _keepdims(ctx: RuleContext, keep_op, name: str = "keepdims") -> bool:
    """A reduction's ``keepdims=`` (or another flag ``name``: a literal True/False; False where not given)."""
    if keep_op is not None and not (isinstance(keep_op.value, Static) and keep_op.value.known):
        raise ctx.error(UnsupportedError, keep_op.original, f"{name} must be a literal True/False",
                        f"write {name}=True or {name}=False")
    return bool(keep_op.value.literal) if keep_op is not None else False


def _is_none(operand) -> bool:
    return isinstance(operand.value, Static) and operand.value.known and operand.value.literal is None


def _local_extra(layout: Layout, reduced: list[int], operand, extra: str) -> bool:
    """Whether ``where=``/``initial=`` can run locally: nothing reduced is split or partial,
    and a ``where`` mask has the reduced value's own layout (so its local shape matches)."""
    if extra == "out" or layout.partial or any(layout.axes[i] for i in reduced):
        return False
    value = operand.value
    if extra == "where":
        return isinstance(value, Static) or (isinstance(value, Array) and value.layout == layout)
    return isinstance(value, Static)


def mask_layout(layout: Layout, value) -> Layout | None:
    """The layout a ``where=`` mask (or ``b=`` weights) broadcasting against an array of ``layout`` takes:
    its dims are the array's trailing ones, a size-1 dim (``mask[None, :]``) in place of any, each split as
    the array's same dim (so each device's block of the mask broadcasts against its block of the array);
    None for any other mask."""
    if not (isinstance(value, Array) and not value.layout.partial and value.layout.rank <= layout.rank):
        return None
    offset = layout.rank - value.layout.rank
    axes = []
    for i, d in enumerate(value.dims):
        if d == BROADCAST:
            axes.append(())
        elif d == layout.dims[offset + i]:
            axes.append(layout.axes[offset + i])
        elif d.endswith(INFERRED):  # x[:, :1] > 0 beside an unsplit dim; jnp.arange(cfg.n) < k beside a split
            axes.append(layout.axes[offset + i])  # one (its size checked when traced: mask_convert)
        elif layout.dims[offset + i].endswith(INFERRED):  # a mask of the user's 'batch' beside a 'batch?' meshify
            axes.append(layout.axes[offset + i])  # named (a concatenate's): the mask's dim is the array's
        else:
            return None
    return Layout(value.dims, tuple(axes))


def mask_convert(ctx: RuleContext, operand, layout: Layout, purpose: str) -> Convert:
    """The conversion of a ``where=`` mask (or weights) to :func:`mask_layout`; a dim of it meshify named
    itself (``jnp.arange(cfg.n)``: ``n?``) split along the array's dim is checked, when traced, to have that
    dim's size (a block of one entry would broadcast where, on one device, the mask does not)."""
    target = mask_layout(layout, operand.value)
    assert target is not None
    convert = Convert(operand, target, purpose)
    offset = layout.rank - target.rank
    named = tuple(layout.dims[offset + i] for i in range(target.rank))
    if any(d.endswith(INFERRED) and axes and not before for d, axes, before in
           zip(operand.value.dims, target.axes, operand.value.layout.axes)):
        from meshify.rewrite.rules.elementwise import _checked_entries

        convert = _checked_entries(ctx, convert, named)
    return convert


def _mask_follows(layout: Layout, reduced: list[int], operand, kind: str) -> bool:
    """Whether a ``where=`` array can take x's layout (:func:`mask_layout`), and the reduction stays
    right with masked local blocks: a sum always, a mean of a partial sum too (linear), a max or min of x
    made whole; over split dims a mean, max and min are :func:`_masked_split`'s."""
    if mask_layout(layout, operand.value) is None:
        return False
    return kind in ("sum", "mean", "max", "min") and (kind == "sum" or not any(layout.axes[i] for i in reduced))


def _reduce_rule(ctx: RuleContext, call: Call, kind: str):
    x = call.receiver if call.receiver is not None else call.arg(0, "a")
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = x.value.layout
    reduced = _reduced_dims(ctx, call, layout, _reduce_arg(call, kind, "axis"))
    if kind != "sum" and any(layout.axes[i] for i in reduced):
        masked = _masked_split(ctx, call, kind, x, reduced)
        if masked is not None:
            return masked
    masks: list[Convert] = []
    once = None  # sum(initial=c) over split dims: c added on one device of them only (the rest add 0)
    for extra in ("where", "initial", "out"):
        operand = _reduce_arg(call, kind, extra)
        if extra == "initial" and kind == "sum" and operand is not None and not _is_none(operand) \
                and isinstance(operand.value, Static | Opaque) \
                and (layout.partial or any(layout.axes[i] for i in reduced)):
            once = operand
            continue
        if extra == "where" and operand is not None and _mask_follows(layout, reduced, operand, kind):
            # A mask of x's own dims, in x's layout: a masked sum of local blocks is a partial sum of the
            # masked sum (so over split dims too), and where nothing reduced is split it runs as written.
            masks.append(mask_convert(ctx, operand, layout, f"{kind}'s where="))
            continue
        made_whole = layout.with_partial(()) if kind in ("max", "min") else layout  # (a max reads x whole)
        if operand is not None and not _is_none(operand) and not _local_extra(made_whole, reduced, operand, extra):
            split = [layout.dims[i] for i in reduced if layout.axes[i]]
            why = (f"it reduces split dim{'s' if len(split) > 1 else ''} {', '.join(map(repr, split))}" if split
                   else f"{ctx.code(x.original)!r} is a partial sum over "
                        f"{', '.join(map(repr, sorted(layout.partial)))}" if layout.partial
                   else f"{extra}= must have the layout of {ctx.code(x.original)!r} ({layout.describe()})")
            fix = (f"map {', '.join(map(repr, split))} to no mesh axis (rules={{{', '.join(f'{d!r}: None' for d in split)}}})"
                   f", or drop {extra}=" if split else f"drop {extra}=, or name the value first so it is reduced "
                   f"(v: Tensor[{hint_dims(layout.dims)}] = ...)" if layout.partial
                   else f"give {extra}= the dims {list(layout.dims)}")
            raise ctx.error(UnsupportedError, operand.original,
                            f"{call.name}({extra}=...) on {ctx.code(x.original)!r} of layout {layout.describe()}: "
                            f"{why}", fix)
    keepdims = _keepdims(ctx, _reduce_arg(call, kind, "keepdims"))
    split = [i for i in reduced if layout.axes[i]]
    split_axes = tuple(a for i in split for a in layout.axes[i])
    linear = kind in ("sum", "mean")
    source = layout if linear else layout.with_partial(())
    converts = (Convert(x, source, call.name.rsplit(".", 1)[-1]), *masks)
    dims, axes = [], []
    for i, (d, a) in enumerate(zip(layout.dims, layout.axes)):
        if i in reduced:
            if keepdims:
                dims.append(BROADCAST)
                axes.append(())
        else:
            dims.append(d)
            axes.append(a)
    lowering = Lowering(Array(Layout(tuple(dims), tuple(axes)), x.value.origin), converts)
    origin = x.value.origin
    partial = set(source.partial)
    if split and linear:
        partial |= set(split_axes)
        lowering = replace(lowering, accumulate=("dtype", (x,)))
        names = ", ".join(f"'{layout.dims[i]}'" for i in split)
        origin = f"reduced {names} split"
        if kind == "mean":
            shards = ctx.mesh.size(split_axes)
            lowering = replace(lowering, template="({call} / {shards})", fill=(("shards", shards),),
                               notes=(f"mean over split {names}: local mean / {shards} shards, summed later",))
    elif split:
        # One runtime call rather than pmax(local max): its derivative shares ties across devices.
        fn = "pmax" if kind == "max" else "pmin"
        template = "{mr}.%s({x}, axis={axis}, axis_name={axes}%s)" % (kind, ", keepdims=True" if keepdims else "")
        emitted = Emitted(fn, ctx.mesh.order(split_axes), Layout(tuple(dims), tuple(axes)), layout.dims[split[0]],
                          f"{fn} over {axes_text(split_axes)}: {kind} over split dim "
                          f"'{layout.dims[split[0]]}' of {ctx.code(x.original)!r}")
        axis = reduced[0] if len(reduced) == 1 else tuple(reduced)
        lowering = replace(lowering, template=template, emitted=(emitted,),
                           fill=(("x", Ref(0)), ("axis", axis), ("axes", MeshAxes(ctx.mesh.order(split_axes)))))
    if once is not None:
        over = ctx.mesh.order(partial)
        lowering = replace(lowering, replace=((At(call.position(once)), Template(
            "{mr}.on_one_device({c}, {axes})", (("c", once.node), ("axes", MeshAxes(over))))),))
    return replace(lowering, result=Array(Layout(tuple(dims), tuple(axes), frozenset(partial)), origin))



def _masked_split(ctx: RuleContext, call: Call, kind: str, x, reduced: list[int]) -> Lowering | None:
    """``jnp.mean(x, where=mask)``, ``jnp.max(x, where=mask, initial=v)`` (``min``; ``initial=`` alone) over
    split dims: ``mr.mean`` sums the masked block and counts its elements on each device, both summed over
    the devices, then divides; ``mr.max`` puts the identity where the mask is False, reduces across devices
    and meets ``initial`` last, as JAX does.  The mask has x's dims and is taken in x's layout.  None where
    neither is given (the plain reduction's rule)."""
    where = _reduce_arg(call, kind, "where")
    initial = _reduce_arg(call, kind, "initial") if kind != "mean" else None
    where = None if where is None or _is_none(where) else where
    initial = None if initial is None or _is_none(initial) else initial
    if where is None and initial is None:
        return None
    layout = x.value.layout
    out = _reduce_arg(call, kind, "out")
    if out is not None and not _is_none(out):
        raise ctx.error(UnsupportedError, out.original, f"{call.name}(out=...)", "drop out=; JAX arrays are immutable")
    if where is not None and mask_layout(layout, where.value) is None:
        got = list(where.value.dims) if isinstance(where.value, Array) else "unknown dims"
        raise ctx.error(UnsupportedError, where.original,
                        f"{call.name}(where=...) over split dims, with a mask of dims {got} beside {list(layout.dims)}",
                        f"give the mask the dims of the array it masks, in the same order "
                        f"(mask: Tensor[{hint_dims(layout.dims)}] = ...)")
    # -jnp.inf, float("-inf"), a literal, CFG.floor of a module-level config (opaque: one value on every
    # device, met once after the reduction across devices, as JAX meets it after its own)
    if initial is not None and not isinstance(initial.value, Static | Opaque):
        raise ctx.error(UnsupportedError, initial.original, f"{call.name}(initial=...) with an array over split dims",
                        "pass a Python scalar as initial=")
    if kind in ("max", "min") and where is not None and initial is None:
        raise ctx.error(UnsupportedError, where.original, f"{call.name}(where=...) without initial= (JAX refuses "
                        f"it: a {kind} has no identity)", "pass initial=, the value of a row masked out entirely")
    keepdims = _keepdims(ctx, _reduce_arg(call, kind, "keepdims"))
    whole = layout.with_partial(())
    converts = [Convert(x, whole, call.name.rsplit(".", 1)[-1])]
    fills: list[tuple[str, object]] = [("x", Ref(0))]
    keywords = ""
    if where is not None:
        converts.append(mask_convert(ctx, where, layout, f"{kind}'s where="))
        fills.append(("w", Ref(1)))
        keywords += ", where={w}"
    if initial is not None:
        fills.append(("initial", initial.node))
        keywords += ", initial={initial}"
    dtype = _reduce_arg(call, kind, "dtype") if kind == "mean" else None
    if dtype is not None and not _is_none(dtype):
        fills.append(("dtype", dtype.node))
        keywords += ", dtype={dtype}"
    if keepdims:
        keywords += ", keepdims=True"
    dims = tuple(BROADCAST if i in reduced else d for i, d in enumerate(layout.dims) if keepdims or i not in reduced)
    axes = tuple(() if i in reduced else a for i, a in enumerate(layout.axes) if keepdims or i not in reduced)
    split = [i for i in reduced if layout.axes[i]]
    split_axes = ctx.mesh.order(a for i in split for a in layout.axes[i])
    names = ", ".join(f"'{layout.dims[i]}'" for i in split)
    result = Layout(dims, axes)
    if kind == "mean":
        emitted = tuple(Emitted("wide_psum", split_axes, result, layout.dims[split[0]],
                                f"psum over {axes_text(split_axes)}: the masked {what} over split {names} of "
                                f"{ctx.code(x.original)!r}") for what in ("sum", "count"))
    else:
        fn = "pmax" if kind == "max" else "pmin"
        emitted = (Emitted(fn, split_axes, result, layout.dims[split[0]],
                           f"{fn} over {axes_text(split_axes)}: {kind} over split {names} of {ctx.code(x.original)!r}"),)
    fills += [("axis", reduced[0] if len(reduced) == 1 else tuple(reduced)), ("axes", MeshAxes(split_axes))]
    template = "{mr}." + kind + "({x}, axis={axis}, axis_name={axes}" + keywords + ")"
    return Lowering(Array(result, f"reduced {names} split"), tuple(converts), template, tuple(fills), emitted)


_REDUCE_READS = ("a", "axis", "dtype", "out", "keepdims", "initial", "where")  # promote_integers: static, passed
for _kind in ("sum", "mean", "max", "min"):
    op(f"jax.numpy.{_kind}", method=_kind, kind=_kind, reads=_REDUCE_READS, passthrough=True)(_reduce_rule)
op("jax.numpy.amax", kind="max", reads=_REDUCE_READS)(_reduce_rule)
op("jax.numpy.amin", kind="min", reads=_REDUCE_READS)(_reduce_rule)


# -- softmax family ---------------------------------------------------------------------------


def _softmax_rule(ctx: RuleContext, call: Call, kind: str):
    x = call.arg(0, "x") if kind != "logsumexp" else call.arg(0, "a")
    if x is None or not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = x.value.layout
    default_all = kind == "logsumexp"
    axis_op = call.arg(1, "axis")
    reduced = _reduced_dims(ctx, call, layout, axis_op, default_all=default_all)
    if axis_op is None and not default_all:
        reduced = [layout.rank - 1]
    converts = [Convert(x, layout.with_partial(()), kind)]
    split = [i for i in reduced if layout.axes[i]]
    keepdims = signed = False
    if kind == "logsumexp":
        keepdims = _keepdims(ctx, call.arg(3, "keepdims"))
        signed = _keepdims(ctx, call.arg(4, "return_sign"), "return_sign")
        dims = tuple(BROADCAST if i in reduced else d for i, d in enumerate(layout.dims) if keepdims or i not in reduced)
        axes = tuple(() if i in reduced else a for i, a in enumerate(layout.axes) if keepdims or i not in reduced)
        result = Array(Layout(dims, axes))
        if signed:  # (log |sum|, sign of the sum): two arrays of one layout
            result = TupleValue((result, Array(result.layout)))
    else:
        result = Array(layout.with_partial(()))
    extras = [(name, o) for name in ("where", "b") if (o := call.params.get(name)) is not None and not _is_none(o)]
    if not split:
        for name, o in extras:  # a mask or weights: elementwise with x, so in x's layout
            if isinstance(o.value, Array) and mask_layout(layout, o.value) is None:
                raise ctx.error(UnsupportedError, o.original,
                                f"{call.name}({name}=...) with dims {list(o.value.dims)} beside {list(layout.dims)}",
                                f"give {name}= the dims of the array it weighs, in the same order")
            if isinstance(o.value, Array):
                converts.append(mask_convert(ctx, o, layout, f"{kind}'s {name}="))
            elif not isinstance(o.value, Static):
                raise ctx.error(UnsupportedError, o.original, f"{call.name}({name}=...) of unknown dims",
                                f"name its dims first: {name}: Tensor[...] = ...")
        return Lowering(result, tuple(converts))
    # A mask or weights of x's dims: in x's layout, passed to the runtime's softmax, which masks and
    # weighs each device's block as JAX does the whole (a Python scalar is passed as it is).
    keywords, fills = "", []
    for name, o in extras:
        if isinstance(o.value, Array) and mask_layout(layout, o.value) is not None:
            fills.append((name, Ref(len(converts))))
            converts.append(mask_convert(ctx, o, layout, f"{kind}'s {name}="))
        elif isinstance(o.value, Static) and o.value.known and isinstance(o.value.literal, bool | int | float):
            fills.append((name, o.node))
        else:
            raise ctx.error(UnsupportedError, o.original, f"{call.name}({name}=...) over split dim "
                            f"{layout.dims[split[0]]!r}, of dims {list(getattr(o.value, 'dims', ()))} beside "
                            f"{list(layout.dims)}", f"give {name}= the dims of the array it applies to, in the "
                            f"same order ({name}: Tensor[{hint_dims(layout.dims)}] = ...)")
        keywords += f", {name}={{{name}}}"
    split_axes = ctx.mesh.order(a for i in split for a in layout.axes[i])
    axis_value = reduced[0] if len(reduced) == 1 else tuple(reduced)
    template = "{mr}.%s({x}, axis={axis}, axis_name={axes}%s%s%s)" % (
        kind, ", keepdims=True" if keepdims else "", ", return_sign=True" if signed else "", keywords)
    names = ", ".join(f"'{layout.dims[i]}'" for i in split)
    statistic = Layout(tuple(BROADCAST if i in reduced else d for i, d in enumerate(layout.dims)),
                       tuple(() if i in reduced else a for i, a in enumerate(layout.axes)))
    emitted = Emitted(kind, split_axes, statistic, layout.dims[split[0]],
                      f"{kind} over split {names}: local max, pmax, local sum of exp, psum over "
                      f"{axes_text(split_axes)}")
    return Lowering(result, tuple(converts), template,
                    (("x", Ref(0)), ("axis", axis_value), ("axes", MeshAxes(split_axes)), *fills), (emitted,))


op("jax.nn.softmax", kind="softmax", reads=("x", "axis", "where"))(_softmax_rule)
op("jax.nn.log_softmax", kind="log_softmax", reads=("x", "axis", "where"))(_softmax_rule)
op("jax.nn.logsumexp", "jax.scipy.special.logsumexp", kind="logsumexp",
   reads=("a", "axis", "b", "keepdims", "return_sign", "where"))(_softmax_rule)
