"""Statistics over named dims: var/std, norms, prod, argmax/argmin, any/all, count_nonzero, cumsum/cumprod.

Over unsplit dims each runs locally, as written.  Over a split dim each is one runtime call
(:mod:`meshify.runtime._statistics`) with its collectives: var/std two all-reduces (global mean,
then the sum of squared deviations, over the global count minus ddof), one where the function has
just computed that mean itself (a norm layer's statistics: the mean is summed once); a vector norm one psum (or
pmax/pmin for ``inf``/``-inf``); prod an all-gather of the local products; argmax/argmin a pmax of
an ordered key and a pmin of the first global index; any/all one all-reduce of the flags;
cumsum/cumprod (and ``jax.lax``'s cumulative ops) an all-gather of the shard totals (an exclusive prefix per
device); ptp a pmax and a pmin; average two psums (the weighted sum, the sum of the weights).
count_nonzero is linear in its counts: local counts and a deferred psum, as a sum.
"""

from __future__ import annotations

import ast
import math
from dataclasses import replace

import libcst as cst

from meshify._halos import section_groups
from meshify.annotate._types import BROADCAST, INFERRED, Layout, hint_dims
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._collectives import axes_text, halo_kind, sections_kind
from meshify.rewrite._values import Array, Opaque, Operand, Static, TupleValue
from meshify.rewrite.rules._api import Call, Convert, Emitted, Lowering, MeshAxes, Ref, RuleContext, op, unknown_call
from meshify.rewrite.rules.reductions import _is_none, mask_convert, mask_layout

# -- reading the call ---------------------------------------------------------------------------------


def _subject(call: Call, name: str = "a"):
    """The array reduced: the receiver of a method, else the first parameter."""
    return call.receiver if call.receiver is not None else call.params.get(name)


def _given(call: Call, name: str):
    """The operand passed for ``name``, or None where it was not passed or is a literal None."""
    o = call.params.get(name)
    if o is None or (isinstance(o.value, Static) and o.value.known and o.value.literal is None):
        return None
    return o


def _literal(ctx: RuleContext, call: Call, name: str, default: object = None) -> object:
    """A parameter that must be a literal (an axis, keepdims), or a positioned error."""
    o = call.params.get(name)
    if o is None:
        return default
    if not (isinstance(o.value, Static) and o.value.known):
        raise ctx.error(UnsupportedError, o.original, f"{name}={ctx.code(o.original)} of {call.name} is not a literal",
                        f"write {name} as a literal (e.g. {name}=-1), so that meshify knows which dims it works along")
    return o.value.literal


def _dims(ctx: RuleContext, call: Call, layout: Layout, name: str = "axis") -> list[int] | None:
    """The dims ``axis`` names, in range and sorted (None: every dim)."""
    axis = _literal(ctx, call, name)
    if axis is None:
        return None
    out = []
    for a in axis if isinstance(axis, tuple) else (axis,):
        if not isinstance(a, int) or isinstance(a, bool) or not -layout.rank <= a < layout.rank:
            o = call.params[name]
            raise ctx.error(LayoutError, o.original, f"axis {a!r} is out of range for a value of dims "
                            f"{list(layout.dims)}", f"use an axis from {-layout.rank} to {layout.rank - 1}")
        out.append(a % layout.rank)
    return sorted(set(out))


def _keepdims(ctx: RuleContext, call: Call) -> bool:
    value = _literal(ctx, call, "keepdims", False)
    return bool(value)


def _reduced(layout: Layout, reduced: list[int], keepdims: bool) -> Layout:
    """The layout after reducing ``reduced`` (kept as size-1 dims with ``keepdims``)."""
    dims, axes = [], []
    for i, (d, a) in enumerate(zip(layout.dims, layout.axes)):
        if i not in reduced:
            dims.append(d)
            axes.append(a)
        elif keepdims:
            dims.append(BROADCAST)
            axes.append(())
    return Layout(tuple(dims), tuple(axes))


def _split(layout: Layout, reduced: list[int]) -> list[int]:
    return [i for i in reduced if layout.axes[i]]


def _names(layout: Layout, split: list[int]) -> str:
    return ", ".join(f"'{layout.dims[i]}'" for i in split)


def _fix(layout: Layout, split: list[int]) -> str:
    dims = [layout.dims[i] for i in split]
    return f"map {', '.join(map(repr, dims))} to no mesh axis (rules={{{', '.join(f'{d!r}: None' for d in dims)}}})"


def _mask(ctx: RuleContext, call: Call, layout: Layout, split: list[int], kind: str) -> list[Convert]:
    """A ``where=`` mask: an array of x's own dims (or of its trailing dims, broadcasting) goes to x's layout (a
    masked local block is right for sums, products and flags); a literal is fine; anything else is refused at its
    place."""
    o = _given(call, "where")
    if o is None or (isinstance(o.value, Static) and not split):
        return []
    if isinstance(o.value, Array) and o.value.dims == layout.dims and not o.value.layout.partial:
        return [Convert(o, layout.with_partial(()), f"{kind}'s where=")]
    if mask_layout(layout, o.value) is not None:  # x's trailing dims (size-1 dims too): broadcast by each block
        return [mask_convert(ctx, o, layout, f"{kind}'s where=")]
    raise ctx.error(UnsupportedError, o.original, f"{call.name}(where={ctx.code(o.original)}) beside an array of "
                    f"dims {list(layout.dims)}", f"give where= the dims {list(layout.dims)} (named: "
                    f"m: Tensor[{hint_dims(layout.dims)}] = ...), or drop it")


def _static(ctx: RuleContext, call: Call, name: str, what: str = "a Python value"):
    """A parameter passed on as written (dtype=, ddof=): it must be static, not an array."""
    o = _given(call, name)
    if o is not None and not isinstance(o.value, Static):
        raise ctx.error(UnsupportedError, o.original, f"{call.name}({name}={ctx.code(o.original)}): meshify passes "
                        f"{name}= to a sharded reduction as written, so it must be {what}, not an array",
                        f"write {name}= as a literal or a Python value")
    return o


def _fill(lowering_fill: list, template: list, call: Call, ctx: RuleContext, *names: str) -> None:
    """Appends ``, name={name}`` for each static parameter given, filled with its node."""
    for name in names:
        o = _static(ctx, call, name)
        if o is not None:
            template.append(f", {name}={{{name}}}")
            lowering_fill.append((name, o.node))


def _statistic(ctx: RuleContext, call: Call, x, layout: Layout, reduced: list[int], keepdims: bool, kind: str,
               runtime: str,
               split: list[int], reason: str, extra: tuple = (), axes=None, params: tuple[str, ...] = (),
               converts: tuple[Convert, ...] = ()) -> Lowering:
    """``mr.<runtime>(x, axis=..., axis_name=..., <params>, keepdims=True)`` running collective ``kind``."""
    axes = axes if axes is not None else ctx.mesh.order(a for i in split for a in layout.axes[i])
    axis = reduced[0] if len(reduced) == 1 else tuple(reduced)
    template = ["{mr}." + runtime + "({x}, axis={axis}, axis_name={axes}"]
    fill: list = [("x", Ref(0)), ("axis", axis), ("axes", MeshAxes(axes))]
    for name, value in extra:
        template.append(f", {name}={{{name}}}")
        fill.append((name, value))
    _fill(fill, template, call, ctx, *params)
    if keepdims:
        template.append(", keepdims=True")
    template.append(")")
    emitted = Emitted(kind, axes, _reduced(layout, reduced, True), layout.dims[split[0]],
                      f"{kind.removeprefix('wide_')} over {axes_text(axes)}: {runtime} over split {_names(layout, split)} of "
                      f"{ctx.code(x.original)!r}: {reason}")
    return Lowering(Array(_reduced(layout, reduced, keepdims)), (Convert(x, layout.with_partial(()), runtime),
                                                                 *converts),
                    "".join(template), tuple(fill), (emitted,))


def _reduction(ctx: RuleContext, call: Call):
    """The array a reduction reduces, its layout, the dims it reduces (all where ``axis`` is None),
    ``keepdims``, and which of those dims are split; None where the subject is not a named array."""
    x = _subject(call)
    if not isinstance(x.value, Array):
        return None
    layout = x.value.layout
    reduced = _dims(ctx, call, layout)
    reduced = list(range(layout.rank)) if reduced is None else reduced
    return x, layout, reduced, _keepdims(ctx, call), _split(layout, reduced)


# -- var / std ------------------------------------------------------------------------------------------


def _var_rule(ctx: RuleContext, call: Call, kind: str):
    operands = _reduction(ctx, call)
    if operands is None:
        return unknown_call(ctx, call)
    x, layout, reduced, keepdims, split = operands
    whole = Convert(x, layout.with_partial(()), kind)
    if not split:
        return Lowering(Array(_reduced(layout, reduced, keepdims)), (whole, *_mask(ctx, call, layout, split, kind)))
    masks = tuple(_mask(ctx, call, layout, split, kind))
    ddof, correction = _static(ctx, call, "ddof"), _static(ctx, call, "correction")
    if ddof is not None and correction is not None:
        raise ctx.error(UnsupportedError, correction.original, f"{call.name}: ddof= and correction= both given",
                        "pass one of them (they mean the same)")
    extra = () if (ddof or correction) is None else (("ddof", (ddof or correction).node),)
    mean = None if masks or _given(call, "dtype") is not None else _shared_mean(ctx, call, x, reduced)
    if mean is not None:  # the user's own mean of x, summed once: one psum less
        return _statistic(ctx, call, x, layout, reduced, keepdims, "psum", kind, split,
                          f"squared deviations from {ctx.code(mean.original)!r}, the global mean computed just "
                          "before (psum), over the global count", (*extra, ("mean", Ref(1))),
                          converts=(Convert(mean, mean.value.layout.with_partial(()), f"{kind}'s mean"),))
    if masks:  # the global count of the mask is one more psum
        return _statistic(ctx, call, x, layout, reduced, keepdims, "masked_var", kind, split,
                          "global count of where= (psum), global mean (psum), then squared deviations (psum)",
                          (*extra, ("where", Ref(1))), params=("dtype",), converts=masks)
    return _statistic(ctx, call, x, layout, reduced, keepdims, kind, kind, split,
                      "global mean (psum), then squared deviations (psum), over the global count",
                      extra, params=("dtype",))


def _shared_mean(ctx: RuleContext, call: Call, x, reduced: list[int]):
    """The user's own mean of ``x`` over the same dims, bound by an earlier statement of the same block and
    still bound to it (``m = jnp.mean(g, axis=(1, 2), keepdims=True)`` then ``jnp.var(g, axis=(1, 2))``, as
    group and batch norm write them), as an operand; else None.  var then centres on it, so that the global
    mean is all-reduced once for both (two all-reduces where a mean and a var took three)."""
    if not isinstance(x.original, cst.Name):
        return None
    block, at = _statement_of(ctx.function.body, call.node)
    rebound: set[str] = set()
    for stmt in reversed(block[:at]):
        bound = _binds(stmt)
        mean = _mean_of(ctx, stmt, x.original.value, reduced, x.value.layout.rank) if bound is not None and \
            len(bound) == 1 else None
        if mean is not None:
            return None if mean in rebound else _bound_mean(ctx, mean, x.value.layout, reduced)
        if bound is None or x.original.value in bound:
            return None
        rebound |= bound
    return None


def _statement_of(body, node: cst.CSTNode) -> tuple[list, int]:
    """The statements of ``body`` (a function's top-level block) and the index of the one holding ``node``."""
    statements = list(getattr(body, "body", ()))
    for i, stmt in enumerate(statements):
        if _holds(stmt, node):
            return statements, i
    return [], 0


def _holds(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    return tree is node or any(_holds(child, node) for child in tree.children)


def _binds(stmt) -> set[str] | None:
    """The names a simple statement binds (None for anything else: a compound statement, a call for effect)."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return None
    names: set[str] = set()
    for small in stmt.body:
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
            [small.target] if isinstance(small, cst.AnnAssign | cst.AugAssign) else None
        if targets is None or not all(isinstance(t, cst.Name) for t in targets):
            return None
        names |= {t.value for t in targets}
    return names


def _mean_of(ctx: RuleContext, stmt: cst.SimpleStatementLine, name: str, reduced: list[int], rank: int) -> str | None:
    """``m`` where ``stmt`` is ``m = jnp.mean(name, axis=<reduced>, keepdims=True)`` (or ``name.mean(...)``)."""
    small = stmt.body[0]
    value = small.value if isinstance(small, cst.Assign | cst.AnnAssign) else None
    if len(stmt.body) != 1 or not isinstance(value, cst.Call):
        return None
    func, args = value.func, list(value.args)
    is_method = isinstance(func, cst.Attribute) and func.attr.value == "mean" and \
        isinstance(func.value, cst.Name) and func.value.value == name
    if not is_method:
        if "jax.numpy.mean" not in ctx.qualified_names(func) or not args or args[0].keyword is not None:
            return None
        first = args.pop(0).value
        if not (isinstance(first, cst.Name) and first.value == name):
            return None
    keywords = {a.keyword.value: a.value for a in args if a.keyword is not None}
    if len(keywords) != len(args) or set(keywords) != {"axis", "keepdims"} or \
            ctx.code(keywords["keepdims"]) != "True":
        return None
    try:
        axis = ast.literal_eval(ctx.code(keywords["axis"]))
    except (ValueError, SyntaxError):
        return None
    target = small.targets[0].target if isinstance(small, cst.Assign) else small.target
    axes = axis if isinstance(axis, tuple) else (axis,)
    return target.value if all(isinstance(a, int) for a in axes) and sorted({a % rank for a in axes}) == reduced \
        else None


def _bound_mean(ctx: RuleContext, name: str, layout: Layout, reduced: list[int]):
    """``name`` as an operand, where it still holds a mean of ``layout`` over ``reduced`` (kept dims)."""
    value = ctx.bound(name)
    want = _reduced(layout, reduced, True)
    if not isinstance(value, Array) or value.layout.with_partial(()) != want.with_partial(()):
        return None
    node = cst.Name(name)
    return Operand(value, node, node)


for _kind in ("var", "std"):
    op(f"jax.numpy.{_kind}", method=_kind, kind=_kind,
       reads=("a", "axis", "dtype", "ddof", "keepdims", "where", "correction"))(_var_rule)


# -- nansum / nanmean / nanvar / nanstd / nanmax / nanmin ---------------------------------------------------

_NAN_VAR = "the non-NaN entries' global count (psum), global mean (psum), then squared deviations (psum)"
_NAN_REASONS = {
    "nansum": ("nansum", "the non-NaN entries' local sums (psum)"),
    "nanmean": ("nanmean", "the non-NaN entries' global sum (psum) over their global count (psum)"),
    "nanvar": ("masked_var", _NAN_VAR),
    "nanstd": ("masked_var", _NAN_VAR),
    "nanmax": ("nanmax", "the max of the non-NaN entries (pmax), and whether there is one (NaN where none)"),
    "nanmin": ("nanmin", "the min of the non-NaN entries (pmin), and whether there is one (NaN where none)"),
}


def _nan_rule(ctx: RuleContext, call: Call, kind: str):
    """``jnp.nansum``/``nanmean``/``nanvar``/``nanstd``/``nanmax``/``nanmin``: as written over unsplit dims;
    over split ones a runtime call with its collectives (NaN entries skipped globally, not per device)."""
    operands = _reduction(ctx, call)
    if operands is None:
        return unknown_call(ctx, call)
    x, layout, reduced, keepdims, split = operands
    if not split:
        return Lowering(Array(_reduced(layout, reduced, keepdims)), (Convert(x, layout.with_partial(()), kind),))
    collective, reason = _NAN_REASONS[kind]
    params = ("dtype", "ddof") if kind in ("nanvar", "nanstd") else ("dtype",) if kind in ("nansum", "nanmean") \
        else ()
    return _statistic(ctx, call, x, layout, reduced, keepdims, collective, kind, split, reason, params=params)


for _kind in ("nansum", "nanmean"):
    op(f"jax.numpy.{_kind}", kind=_kind, reads=("a", "axis", "dtype", "keepdims"))(_nan_rule)
for _kind in ("nanvar", "nanstd"):
    op(f"jax.numpy.{_kind}", kind=_kind, reads=("a", "axis", "dtype", "ddof", "keepdims"))(_nan_rule)
for _kind in ("nanmax", "nanmin"):
    op(f"jax.numpy.{_kind}", kind=_kind, reads=("a", "axis", "keepdims"))(_nan_rule)


# -- norms ------------------------------------------------------------------------------------------------

_INF_NAMES = frozenset({"jax.numpy.inf", "numpy.inf", "math.inf"})
_UNKNOWN = object()


def _ord(ctx: RuleContext, o) -> object:
    """``ord``'s value: a literal, ``inf``/``-inf`` spelled ``jnp.inf``/``-np.inf``/``math.inf``, or
    :data:`_UNKNOWN`."""
    if o is None:
        return None
    if isinstance(o.value, Static) and o.value.known:
        return o.value.literal
    node, sign = o.original, 1.0
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node, sign = node.expression, -1.0
    if isinstance(node, cst.Name | cst.Attribute) and ctx.qualified_names(node) & _INF_NAMES:
        return sign * math.inf
    return _UNKNOWN


_VECTOR_SUM_ORDS = (None, 0, 1, 2)
_MATRIX_ORDS = (None, "fro", "f", 1, -1, math.inf, -math.inf)


def _norm_rule(ctx: RuleContext, call: Call, vector: bool = False):
    """``jnp.linalg.norm``: a vector norm (one axis, or every entry with ``ord=None``) or a matrix norm (two
    axes); ``vector``: ``jnp.linalg.vector_norm``'s, over every entry of the dims it is given, whatever ``ord``."""
    x = _subject(call, "x")
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = x.value.layout
    ord_op = _given(call, "ord")
    order = _ord(ctx, ord_op)
    axis = _dims(ctx, call, layout)
    keepdims = _keepdims(ctx, call)
    if axis is None:
        axis = list(range(layout.rank))
        if order is not None and layout.rank > 2 and not vector:
            raise ctx.error(UnsupportedError, ord_op.original, f"norm(ord=...) without axis= of a {layout.rank}-dim "
                            "value (JAX computes no norm of it)", "pass axis= (one dim or two)")
    matrix = len(axis) == 2 and not (_given(call, "axis") is None and order is None) and not vector
    if len(axis) > 2 and _given(call, "axis") is not None and not vector:
        raise ctx.error(UnsupportedError, call.params["axis"].original, "norm over more than two axes",
                        "pass one axis (a vector norm) or two (a matrix norm)")
    split = _split(layout, axis)
    whole = Convert(x, layout.with_partial(()), "norm")
    result = Array(_reduced(layout, axis, keepdims))
    if not split:
        return Lowering(result, (whole,))
    if order is _UNKNOWN or (isinstance(order, str) and not matrix):
        raise ctx.error(UnsupportedError, ord_op.original, f"norm(ord={ctx.code(ord_op.original)}) over split dim "
                        f"{_names(layout, split)}: meshify needs ord as a literal to choose the collectives",
                        "write ord as a literal (2, 1, jnp.inf, -jnp.inf, 'fro', ...)")
    if matrix:
        return _matrix_norm(ctx, call, x, layout, axis, order, ord_op, keepdims)
    if len(axis) > 1 and order is not None and not vector:  # ord= with axis=None of a 1-d value is a vector norm
        raise ctx.error(UnsupportedError, ord_op.original, "norm(ord=...) over several dims", "pass axis=")
    ord_fill = ("ord", ord_op.node if ord_op is not None else cst.Name("None"))
    kind = "psum" if order in _VECTOR_SUM_ORDS or not math.isinf(order) else ("pmax" if order > 0 else "pmin")
    kind = "wide_psum" if kind == "psum" and order != 0 else kind  # (float16 sums cross in float32)
    what = {"psum": "local sum of |x|**ord", "wide_psum": "local sum of |x|**ord", "pmax": "local max of |x|",
            "pmin": "local min of |x|"}[kind]
    lowering = _statistic(ctx, call, x, layout, axis, keepdims, kind, "norm", split, what)
    # ord goes before axis, as jnp.linalg.norm takes it; vector_norm keeps an integer array's dtype where JAX does
    template = lowering.template.replace("{x}, axis=", "{x}, {ord}, axis=", 1)
    if vector:
        template = template[:-1] + ", inexact=False)"
    return replace(lowering, template=template, fill=(*lowering.fill, ord_fill))


def _matrix_norm(ctx: RuleContext, call: Call, x, layout: Layout, axis: list[int], order, ord_op,
                 keepdims: bool) -> Lowering:
    raw = _literal(ctx, call, "axis")
    row, col = (raw if isinstance(raw, tuple) else tuple(axis))
    row, col = row % layout.rank, col % layout.rank
    if order not in _MATRIX_ORDS:
        raise ctx.error(UnsupportedError, ord_op.original, f"the matrix norm ord={ctx.code(ord_op.original)} over "
                        f"split dims {_names(layout, _split(layout, axis))} (it needs singular values)",
                        f"{_fix(layout, _split(layout, axis))}, or use ord='fro', 1, -1, jnp.inf or -jnp.inf")
    row_axes, col_axes = layout.axes[row], layout.axes[col]
    statistic = _reduced(layout, axis, True)
    what = ctx.code(x.original)
    emitted = []
    if order in (None, "fro", "f"):
        both = ctx.mesh.order((*row_axes, *col_axes))
        emitted.append(Emitted("psum", both, statistic, layout.dims[row if row_axes else col],
                               f"psum over {axes_text(both)}: Frobenius norm of {what!r} over split "
                               f"{_names(layout, _split(layout, axis))}"))
    else:
        summed, along = (row, col) if order in (1, -1) else (col, row)
        sums = _reduced(layout, [summed], True)
        if layout.axes[summed]:
            emitted.append(Emitted("psum", layout.axes[summed], sums, layout.dims[summed],
                                   f"psum over {axes_text(layout.axes[summed])}: matrix norm's sums of |x| over split "
                                   f"'{layout.dims[summed]}' of {what!r}"))
        if layout.axes[along]:
            kind = "pmax" if order > 0 else "pmin"
            emitted.append(Emitted(kind, layout.axes[along], statistic, layout.dims[along],
                                   f"{kind} over {axes_text(layout.axes[along])}: matrix norm's {kind[1:]} over split "
                                   f"'{layout.dims[along]}' of {what!r}"))
    template = ("{mr}.matrix_norm({x}, {ord}, axis={axis}, row_axes={rows}, col_axes={cols}%s)"
                % (", keepdims=True" if keepdims else ""))
    fill = (("x", Ref(0)), ("ord", ord_op.node if ord_op is not None else cst.Name("None")), ("axis", (row, col)),
            ("rows", MeshAxes(row_axes)), ("cols", MeshAxes(col_axes)))
    return Lowering(Array(_reduced(layout, axis, keepdims)), (Convert(x, layout.with_partial(()), "norm"),),
                    template, fill, tuple(emitted))


op("jax.numpy.linalg.norm", reads=("x", "ord", "axis", "keepdims"))(_norm_rule)


# -- prod -----------------------------------------------------------------------------------------------------


def _prod_rule(ctx: RuleContext, call: Call):
    operands = _reduction(ctx, call)
    if operands is None:
        return unknown_call(ctx, call)
    x, layout, reduced, keepdims, split = operands
    masks = tuple(_mask(ctx, call, layout, split, "prod"))
    if not split:
        return Lowering(Array(_reduced(layout, reduced, keepdims)), (Convert(x, layout.with_partial(()), "prod"),
                                                                     *masks))
    extra = (("where", Ref(1)),) if masks else ()
    initial = _static(ctx, call, "initial")
    if initial is not None:
        extra = (*extra, ("initial", initial.node))
    return _statistic(ctx, call, x, layout, reduced, keepdims, "prod", "prod", split,
                      "local products, all-gathered and multiplied", extra, params=("dtype", "promote_integers"),
                      converts=masks)


op("jax.numpy.prod", method="prod",
   reads=("a", "axis", "dtype", "keepdims", "initial", "where", "promote_integers"))(_prod_rule)


# -- ptp / average ------------------------------------------------------------------------------------------------


@op("jax.numpy.ptp", reads=("a", "axis", "keepdims"))
def _ptp_rule(ctx: RuleContext, call: Call):
    """``jnp.ptp``: as written over unsplit dims; over split ones ``mr.ptp``, the max (pmax) minus the min (pmin)."""
    operands = _reduction(ctx, call)
    if operands is None:
        return unknown_call(ctx, call)
    x, layout, reduced, keepdims, split = operands
    if not split:
        return Lowering(Array(_reduced(layout, reduced, keepdims)), (Convert(x, layout.with_partial(()), "ptp"),))
    lowering = _statistic(ctx, call, x, layout, reduced, keepdims, "pmax", "ptp", split, "the max, minus the min")
    low = replace(lowering.emitted[0], kind="pmin", reason=lowering.emitted[0].reason.replace("pmax", "pmin", 1))
    return replace(lowering, emitted=(*lowering.emitted, low))


@op("jax.numpy.average", reads=("a", "axis", "weights", "returned", "keepdims"))
def _average_rule(ctx: RuleContext, call: Call):
    """``jnp.average(x, axis, weights=w, returned=...)``: as written over unsplit dims (``w`` in x's layout, or a
    1-d ``w`` along the averaged dim whole); over split ones ``mr.average``, the local (weighted) sum and sum of
    the weights (count) each summed over the devices (two psums, as a masked mean's), ``w`` split as x is."""
    operands = _reduction(ctx, call)
    if operands is None:
        return unknown_call(ctx, call)
    x, layout, reduced, keepdims, split = operands
    returned = _literal(ctx, call, "returned", False)
    if type(returned) is not bool:
        raise ctx.error(UnsupportedError, call.params["returned"].original, "average(returned=...) is not a bool",
                        "pass returned=True or returned=False")
    out = Array(_reduced(layout, reduced, keepdims))
    result = TupleValue((out, Array(out.layout))) if returned else out
    converts = (Convert(x, layout.with_partial(()), "average"), *_weights(ctx, call, layout, reduced))
    if not split:
        return Lowering(result, converts)
    weighted = len(converts) > 1
    lowering = _statistic(ctx, call, x, layout, reduced, keepdims, "wide_psum", "average", split,
                          "the weighted sum" if weighted else "the sum", (("weights", Ref(1)),) if weighted else (),
                          converts=converts[1:])
    total = lowering.emitted[0]
    count = replace(total, reason=total.reason.replace(": the weighted sum", ": the sum of the weights")
                    if weighted else total.reason.replace(": the sum", ": the count"))
    template = lowering.template[:-1] + (", returned=True)" if returned else ")")
    return replace(lowering, result=result, template=template, emitted=(total, count))


def _weights(ctx: RuleContext, call: Call, layout: Layout, reduced: list[int]) -> tuple[Convert, ...]:
    """``average``'s ``weights=``: an array of x's dims goes to x's layout; a 1-d one of the one dim averaged
    (``axis=1``) to that dim's split; anything else is refused at its place."""
    w = _given(call, "weights")
    if w is None:
        return ()
    if isinstance(w.value, Array) and w.value.dims == layout.dims:
        return (Convert(w, layout.with_partial(()), "average's weights"),)
    if isinstance(w.value, Array) and len(reduced) == 1 and w.value.dims == (layout.dims[reduced[0]],) \
            and _given(call, "axis") is not None:
        return (Convert(w, Layout(w.value.dims, (layout.axes[reduced[0]],)), "average's weights"),)
    over = [layout.dims[i] for i in reduced]
    raise ctx.error(UnsupportedError, w.original, f"{call.name}(weights={ctx.code(w.original)}) beside an array of "
                    f"dims {list(layout.dims)}, averaged over {over}",
                    f"give weights the dims {list(layout.dims)}, or (with axis= one dim) that dim alone, named: "
                    f"w: Tensor[{hint_dims(over if len(over) == 1 else layout.dims)}] = ...")


# -- argmax / argmin ---------------------------------------------------------------------------------------------


def _arg_rule(ctx: RuleContext, call: Call, kind: str):
    x = _subject(call)
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = x.value.layout
    axis = _literal(ctx, call, "axis")
    if isinstance(axis, tuple):
        raise ctx.error(UnsupportedError, call.params["axis"].original, f"{kind}(axis={axis!r}): a tuple of axes",
                        "pass one axis, or axis=None")
    reduced = _dims(ctx, call, layout)
    keepdims = _keepdims(ctx, call)
    flat = reduced is None
    reduced = list(range(layout.rank)) if flat else reduced
    split = _split(layout, reduced)
    result = Array(_reduced(layout, reduced, keepdims))
    if not split:
        return Lowering(result, (Convert(x, layout.with_partial(()), kind),))
    if len(split) > 1:  # (only with axis=None: one reduced dim is one split dim)
        from meshify.rewrite._templates import axes_node

        # each split dim's block offset by its own mesh axes, in the dim's own order; the collectives over all
        blocks = cst.Tuple([cst.Element(axes_node(layout.axes[i])) for i in split])
        extra: tuple = (("split", tuple(split)), ("blocks", blocks))
        names = ctx.mesh.order(a for i in split for a in layout.axes[i])
    else:
        extra, names = (("split", split[0]),), layout.axes[split[0]]  # the dim's own order: each block's offset
    lowering = _statistic(ctx, call, x, layout, reduced, keepdims, kind, kind, split,
                          f"local {kind} of an ordered key (NaN first), p{kind[3:]} of the key, pmin of the first "
                          "global index holding it", extra, axes=names)
    if flat:  # a flat index into the whole array
        lowering = replace(lowering, template=lowering.template.replace("axis={axis}", "axis=None"),
                           fill=tuple((n, v) for n, v in lowering.fill if n != "axis"))
    return lowering


for _kind in ("argmax", "argmin"):
    op(f"jax.numpy.{_kind}", method=_kind, kind=_kind, reads=("a", "axis", "keepdims"))(_arg_rule)
    op(f"jax.numpy.nan{_kind}", kind=f"nan{_kind}", reads=("a", "axis", "keepdims"))(_arg_rule)


# -- any / all / count_nonzero -------------------------------------------------------------------------------


def _flag_rule(ctx: RuleContext, call: Call, kind: str):
    operands = _reduction(ctx, call)
    if operands is None:
        return unknown_call(ctx, call)
    x, layout, reduced, keepdims, split = operands
    masks = tuple(_mask(ctx, call, layout, split, kind))
    if not split:
        return Lowering(Array(_reduced(layout, reduced, keepdims)), (Convert(x, layout.with_partial(()), kind),
                                                                     *masks))
    return _statistic(ctx, call, x, layout, reduced, keepdims, kind, kind, split,
                      f"local {kind}, an all-reduce {'max' if kind == 'any' else 'min'} of the flags",
                      (("where", Ref(1)),) if masks else (), converts=masks)


for _kind in ("any", "all"):
    op(f"jax.numpy.{_kind}", method=_kind, kind=_kind, reads=("a", "axis", "keepdims", "where"))(_flag_rule)


@op("jax.numpy.count_nonzero", reads=("a", "axis", "keepdims"))
def _count_nonzero_rule(ctx: RuleContext, call: Call):
    """Counts add up: local counts, a partial sum over the split axes (psum deferred, as a sum's)."""
    operands = _reduction(ctx, call)
    if operands is None:
        return unknown_call(ctx, call)
    x, layout, reduced, keepdims, split = operands
    out = _reduced(layout, reduced, keepdims)
    axes = frozenset(a for i in split for a in layout.axes[i])
    origin = f"counted {_names(layout, split)} split" if split else ""
    return Lowering(Array(out.with_partial(axes), origin), (Convert(x, layout.with_partial(()), "count_nonzero"),),
                    notes=(f"count_nonzero over split {_names(layout, split)}: local counts, summed later",)
                    if split else ())


# -- cumsum / cumprod ------------------------------------------------------------------------------------------


def _scan_rule(ctx: RuleContext, call: Call, kind: str):
    x = _subject(call)
    if not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    layout = x.value.layout
    axis = _dims(ctx, call, layout)
    if isinstance(_literal(ctx, call, "axis"), tuple):
        raise ctx.error(UnsupportedError, call.params["axis"].original, f"{kind}(axis=...) with a tuple of axes",
                        "pass one axis")
    if axis is None and layout.rank != 1:
        if layout.is_split or layout.partial:
            raise ctx.error(UnsupportedError, call.node, f"{kind} without axis= flattens {ctx.code(x.original)!r}, "
                            f"of layout {layout.describe()}", "pass axis= (the dim to scan along)")
        return Lowering(Opaque(), (Convert(x, layout, kind),))
    dim = 0 if axis is None else axis[0]
    dtype = _given(call, "dtype")
    if not layout.axes[dim]:
        # A cumsum is linear: a pending partial sum passes through it (unless a dtype casts it).
        linear = kind == "cumsum" and dtype is None
        source = layout if linear else layout.with_partial(())
        return Lowering(Array(source, x.value.origin if linear else ""), (Convert(x, source, kind),))
    names = layout.axes[dim]
    totals = Layout(tuple(BROADCAST if i == dim else d for i, d in enumerate(layout.dims)),
                    tuple(() if i == dim else a for i, a in enumerate(layout.axes)))
    template = "{mr}." + kind + "({x}, axis={axis}, axis_name={axes}" + (", dtype={dtype})" if dtype is not None else ")")
    fill = [("x", Ref(0)), ("axis", dim), ("axes", MeshAxes(names))]
    if dtype is not None:
        fill.append(("dtype", _static(ctx, call, "dtype").node))
    emitted = Emitted(kind, names, totals, layout.dims[dim],
                      f"{kind} over {axes_text(names)}: local {kind} plus the {'sum' if kind.endswith('sum') else 'product'}"
                      f" of the earlier shards' totals (all_gather) along split '{layout.dims[dim]}' of "
                      f"{ctx.code(x.original)!r}")
    return Lowering(Array(layout.with_partial(())), (Convert(x, layout.with_partial(()), kind),), template,
                    tuple(fill), (emitted,))


for _kind in ("cumsum", "cumprod"):
    op(f"jax.numpy.{_kind}", method=_kind, kind=_kind, reads=("a", "axis", "dtype"))(_scan_rule)
    op(f"jax.numpy.nan{_kind}", kind=f"nan{_kind}", reads=("a", "axis", "dtype"))(_scan_rule)


# -- along one unsplit dim: sort, argsort, diff, median, glu, lax's cumulative ops --------------------------


#: The kinds along a split dim that gather its rows: nothing cheaper computes them exactly (a diff's result is a
#: row shorter than the dim, which no longer cuts into equal blocks).
_QUANTILES = ("quantile", "percentile", "nanquantile", "nanpercentile")
_WHOLE_ROWS = frozenset({"sort", "argsort", "median", "nanmedian", "diff", *_QUANTILES})

#: kind -> (the parameter holding the array, the default axis, what the op does to the dim it works along:
#: "same" keeps it, "shorter" changes its size (an inferred name), "reduced" removes it; whether it is linear,
#: so that a pending partial sum passes through).
_ALONG = {
    "sort": ("a", -1, "same", False), "argsort": ("a", -1, "same", False), "diff": ("a", -1, "shorter", True),
    "median": ("a", None, "reduced", False), "nanmedian": ("a", None, "reduced", False),
    **{kind: ("a", None, "reduced", False) for kind in _QUANTILES}, "glu": ("x", -1, "shorter", False),
    "lax.cumsum": ("operand", 0, "same", True), "lax.cumprod": ("operand", 0, "same", False),
    "lax.cummax": ("operand", 0, "same", False), "lax.cummin": ("operand", 0, "same", False),
    "lax.cumlogsumexp": ("operand", 0, "same", False),
    "vector_norm": ("x", None, "reduced", False), "standardize": ("x", -1, "same", False),
    "safe_norm": ("x", None, "reduced", False),
}
#: Options of those kinds that must be Python values (an array there would need its own layout).
_SCALAR_OPTIONS = {"standardize": ("epsilon",), "safe_norm": ("min_norm",)}


def _along_rule(ctx: RuleContext, call: Call, kind: str):
    """``jnp.sort(x, axis=-1)``, ``jnp.diff(x, axis=1)``, ``jax.lax.cumsum(x, axis=1, reverse=True)``, ...: each
    row along ``axis`` on its own, so along an unsplit dim every device runs it on its block as written, the
    other dims keeping their splits (a partial sum completed first, unless the op is linear).  Along a split
    dim each device sees only its part of each row: ``jax.lax``'s cumulative ops combine the shard totals, a
    diff with one end of one row takes a one-row halo, sort, the medians, quantiles and other diffs gather the
    rows; the others are refused, naming that dim."""
    subject, default, effect, linear = _ALONG[kind]
    x = call.receiver if call.receiver is not None else call.params.get(subject)
    if x is None or not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    if kind == "vector_norm":  # (jnp.linalg.norm's vector norm over its axes, psummed over split dims)
        return _norm_rule(ctx, call, vector=True)
    for option in _SCALAR_OPTIONS.get(kind, ()):
        given = call.params.get(option)
        if given is not None and isinstance(given.value, Array | Opaque):
            raise ctx.error(UnsupportedError, given.original, f"{call.name}'s {option}= as an array is not modelled "
                            "by meshify", f"pass {option} as a Python number")
    layout = x.value.layout
    axis = _literal(ctx, call, "axis", default)
    if effect == "reduced" and isinstance(axis, tuple) and len(axis) == 1:  # jnp.median(x, axis=(1,))
        axis = axis[0]
    if effect == "reduced" and isinstance(axis, tuple) and axis and all(
            type(a) is int and -layout.rank <= a < layout.rank for a in axis):
        dims = sorted({a % layout.rank for a in axis})  # jnp.median(x, axis=(1, 2)) of unsplit dims: local
        if not any(layout.axes[d] for d in dims):
            source = layout.with_partial(())
            keepdims = _keepdims(ctx, call)
            kept = [(BROADCAST, ()) if d in dims else (source.dims[d], source.axes[d]) for d in range(layout.rank)
                    if keepdims or d not in dims]
            return Lowering(Array(Layout(tuple(k[0] for k in kept), tuple(k[1] for k in kept))),
                            (Convert(x, source, kind),))
    if isinstance(axis, tuple) or (axis is None and layout.rank != 1):
        if layout.is_split or layout.partial:
            raise ctx.error(UnsupportedError, call.node, f"{call.name} over {'every dim' if axis is None else 'several dims'}"
                            f" of {ctx.code(x.original)!r}, of layout {layout.describe()}",
                            "pass axis= naming unsplit dims only, or map the dims it reduces to no mesh axis")
        return Lowering(Opaque(), (Convert(x, layout, kind),))
    if layout.rank == 0:
        return unknown_call(ctx, call)  # (JAX's own error for a 0-d array; a partial sum refused)
    if axis is None:  # a 1-d value: its only dim
        axis = 0
    if not isinstance(axis, int) or isinstance(axis, bool) or not -layout.rank <= axis < layout.rank:
        where = call.params["axis"].original if "axis" in call.params else call.node
        raise ctx.error(LayoutError, where, f"axis {axis!r} is out of range for a value of dims {list(layout.dims)}",
                        f"use an axis from {-layout.rank} to {layout.rank - 1}")
    dim = axis % layout.rank
    if layout.axes[dim] and kind.startswith("lax.cum"):
        return _cumulative(ctx, call, x, layout, dim, kind.removeprefix("lax."))
    if layout.axes[dim] and kind == "diff":
        halo = _diff_halo(ctx, call, x, layout, dim)
        if halo is not None:
            return halo
    if layout.axes[dim] and kind == "standardize":
        return _standardized(ctx, call, x, layout, dim)
    if layout.axes[dim] and kind == "glu":
        return _glu_sections(ctx, x, layout, dim)
    if layout.axes[dim] and kind in _WHOLE_ROWS:
        # sort, argsort, median along a split dim (top-p sampling over a split vocab): every entry of each row is
        # needed, so the rows are gathered (all_gather, as little as an exact sort can move); the result whole
        # along that dim, its other dims keeping their splits
        layout = Layout(layout.dims, tuple(() if i == dim else a for i, a in enumerate(layout.axes)), layout.partial)
    if layout.axes[dim]:
        from meshify.rewrite.rules._api import unsplit_fix

        raise ctx.error(UnsupportedError, call.node,
                        f"{call.name} along split dim {layout.dims[dim]!r} of {ctx.code(x.original)!r} (layout "
                        f"{layout.describe()}): each device holds only its block of every row",
                        unsplit_fix(layout, dim))
    ends = [o for o in (call.params.get("prepend"), call.params.get("append")) if o is not None and not _is_none(o)]
    source = layout if linear and not ends else layout.with_partial(())  # (a constant end is added once)
    converts = [Convert(x, source, kind)]
    for o in ends:  # jnp.diff(x, prepend=0) / prepend=x[:, :1]: joined to each device's rows
        if isinstance(o.value, Static):
            continue
        if not isinstance(o.value, Array) or o.value.layout.rank != layout.rank:
            raise ctx.error(UnsupportedError, o.original, f"{call.name}'s {ctx.code(o.original)!r}: not a number "
                            f"or an array of {layout.rank} dims", "pass a number, or an array with x's dims")
        end = o.value.layout
        converts.append(Convert(o, Layout(end.dims, tuple(() if i == dim else a for i, a in enumerate(layout.axes))),
                                f"{kind}'s ends"))
    out_dims, out_axes = list(source.dims), list(source.axes)
    if effect == "shorter" and out_dims[dim] != BROADCAST:
        out_dims[dim] = out_dims[dim].rstrip(INFERRED) + INFERRED
    elif effect == "reduced":
        keepdims = _keepdims(ctx, call)
        if keepdims:
            out_dims[dim], out_axes[dim] = BROADCAST, ()
        else:
            del out_dims[dim], out_axes[dim]
    if effect == "shorter" and ends:  # the dim's size is the call's (n fewer, plus the ends')
        out_dims[dim] = layout.dims[dim].rstrip(INFERRED) + INFERRED
    result = Array(Layout(tuple(out_dims), tuple(out_axes), source.partial), x.value.origin if linear else "")
    split = tuple(dict.fromkeys(a for axes in source.axes for a in axes))
    if kind == "argsort" and split:
        # JAX types argsort's indices (sorted iota) as the same on every device, whatever x's blocks: typed
        # back as varying, so that a later psum over those axes is accepted (it is a per-device value).
        return Lowering(result, tuple(converts), "{mr}.varying({call}, {axes})", (("axes", MeshAxes(split)),),
                        notes=((f"argsort's indices typed as varying over {axes_text(split)}, as "
                                f"{ctx.code(x.original)!r} is (JAX types them as the same on every device)"),))
    return Lowering(result, tuple(converts))


def _standardized(ctx: RuleContext, call: Call, x, layout: Layout, dim: int) -> Lowering:
    """``jax.nn.standardize(x, axis)`` along split ``dim``: each row's mean and variance from the sums over every
    device's block (``mr.standardize``: psums of the sums and counts, as ``mr.mean``), computed as JAX does for
    ``algorithm=`` (``"fast"``: the mean of squares less the squared mean, clipped at 0), then each device
    standardizes its own block."""
    names = layout.axes[dim]
    algorithm = _literal(ctx, call, "algorithm", "fast")
    if algorithm not in ("fast", "stable"):
        raise ctx.error(UnsupportedError, call.params["algorithm"].original, f"{call.name}(algorithm="
                        f"{ctx.code(call.params['algorithm'].original)})", "pass algorithm=\"fast\" or \"stable\"")
    epsilon = call.params.get("epsilon")
    stats = Layout(tuple(BROADCAST if i == dim else d for i, d in enumerate(layout.dims)),
                   tuple(() if i == dim else a for i, a in enumerate(layout.axes)))
    emitted = Emitted("psum", names, stats, layout.dims[dim],
                      f"standardize over {axes_text(names)}: each row's mean and variance summed over the blocks of "
                      f"split '{layout.dims[dim]}' of {ctx.code(x.original)!r}")
    whole = layout.with_partial(())
    fill = (("x", Ref(0)), ("axis", dim), ("axes", MeshAxes(names)), ("algorithm", algorithm),
            ("epsilon", epsilon.node if epsilon is not None else cst.Float("1e-05")))
    return Lowering(Array(whole), (Convert(x, whole, "standardize"),),
                    "{mr}.standardize({x}, {axis}, {axes}, epsilon={epsilon}, algorithm={algorithm})", fill, (emitted,))


def _glu_sections(ctx: RuleContext, x, layout: Layout, dim: int) -> Lowering:
    """``jax.nn.glu(x, axis)`` along split ``dim`` (a conformer's pointwise conv to ``2 * channels``, split over
    'model'): its halves moved as ``jnp.split(x, 2, axis)``'s sections (``mr.glu``: one ppermute per way the
    chunks move, at most a block per device), then gated on each block; the result, half as long, keeps the
    split (a partial sum completed first)."""
    axes, whole = layout.axes[dim], layout.with_partial(())
    moves = [len(rounds) for to, rounds in section_groups((1, 1), ctx.mesh.size(axes)).items()
             if any(t != j for j, t in enumerate(to))]
    record = Layout(layout.dims, layout.axes)
    emitted = tuple(Emitted(sections_kind(k, 2), axes, record, layout.dims[dim],
                            f"sections over {axes_text(axes)}: glu's halves of split {layout.dims[dim]!r} of "
                            f"{ctx.code(x.original)!r}, each device's chunks sent to the device holding that block of "
                            f"its half (ppermute: {k} chunk{'s' * (k != 1)})") for k in moves)
    dims = tuple(d.rstrip(INFERRED) + INFERRED if i == dim else d for i, d in enumerate(layout.dims))
    return Lowering(Array(Layout(dims, layout.axes)), (Convert(x, whole, "glu"),), "{mr}.glu({x}, {axis}, {axes})",
                    (("x", Ref(0)), ("axis", dim), ("axes", MeshAxes(axes))), emitted)


def _cumulative(ctx: RuleContext, call: Call, x, layout: Layout, dim: int, kind: str) -> Lowering:
    """``jax.lax.cumsum(x, axis, reverse=...)`` (cumprod, cummax, cummin, cumlogsumexp) along split ``dim``: the
    local scan combined with the shard totals before it (``mr.cumulative``: one all-gather of the totals)."""
    names = layout.axes[dim]
    reverse = _literal(ctx, call, "reverse", False)
    if type(reverse) is not bool:
        raise ctx.error(UnsupportedError, call.params["reverse"].original, f"{call.name}(reverse="
                        f"{ctx.code(call.params['reverse'].original)})", "pass reverse=True or reverse=False")
    totals = Layout(tuple(BROADCAST if i == dim else d for i, d in enumerate(layout.dims)),
                    tuple(() if i == dim else a for i, a in enumerate(layout.axes)))
    combined = {"cumsum": "sum", "cumprod": "product", "cummax": "max", "cummin": "min",
                "cumlogsumexp": "logsumexp"}[kind]
    emitted = Emitted(kind, names, totals, layout.dims[dim],
                      f"{kind} over {axes_text(names)}: local {kind} combined with the {combined} of the "
                      f"{'later' if reverse else 'earlier'} shards' totals (all_gather) along split "
                      f"'{layout.dims[dim]}' of {ctx.code(x.original)!r}")
    return Lowering(Array(layout.with_partial(())), (Convert(x, layout.with_partial(()), kind),),
                    "{mr}.cumulative({x}, {axis}, {axes}, {kind}, reverse={reverse})",
                    (("x", Ref(0)), ("axis", dim), ("axes", MeshAxes(names)), ("kind", kind),
                     ("reverse", cst.Name(str(reverse)))), (emitted,))


def _diff_halo(ctx: RuleContext, call: Call, x, layout: Layout, dim: int) -> Lowering | None:
    """``jnp.diff(x, axis=split, prepend=p)`` (or ``append=``) with ``n=1`` and an end of one row (a number, or
    an array of size 1 along the dim): as long as the dim, so each block keeps its rows, the row before it
    (after it) from the neighbouring device (``mr.spatial_diff``: one ppermute of a row).  None for any other
    diff along a split dim: shorter than the dim, which no longer cuts into equal blocks (its rows gathered)."""
    n, ends = call.params.get("n"), [_given(call, "prepend"), _given(call, "append")]
    given = [(side, o) for side, o in zip(("prepend", "append"), ends) if o is not None]
    if (n is not None and not (isinstance(n.value, Static) and n.value.known and n.value.literal == 1)) \
            or len(given) != 1:
        return None
    side, end = given[0]
    if isinstance(end.value, Static):
        if not (end.value.known and type(end.value.literal) in (int, float, bool)):
            return None
        converts, fill = (), end.node
    elif isinstance(end.value, Array) and end.value.layout.rank == layout.rank and end.value.dims[dim] == BROADCAST \
            and all(e in (d, BROADCAST) for e, d in zip(end.value.dims, layout.dims)):
        # (split as x on its other dims, size-1 ones whole)
        others = Layout(end.value.dims, tuple(() if i == dim or e == BROADCAST else a
                                              for i, (e, a) in enumerate(zip(end.value.dims, layout.axes))))
        converts, fill = (Convert(end, others, f"diff's {side}"),), Ref(1)
    else:
        return None
    names = layout.axes[dim]
    slab = Layout(tuple(BROADCAST if i == dim else d for i, d in enumerate(layout.dims)),
                  tuple(() if i == dim else a for i, a in enumerate(layout.axes)))
    emitted = Emitted(halo_kind(1), names, slab, layout.dims[dim],
                      f"halo over {axes_text(names)}: 1 row of {ctx.code(x.original)!r} along split "
                      f"{layout.dims[dim]!r}, the row {'before' if side == 'prepend' else 'after'} each block for "
                      "diff (ppermute)")
    whole = layout.with_partial(())
    return Lowering(Array(whole), (Convert(x, whole, "diff"), *converts),
                    "{mr}.spatial_diff({x}, {axis}, " + side + "={end}, axis_name={axes})",
                    (("x", Ref(0)), ("axis", dim), ("end", fill), ("axes", MeshAxes(names))), (emitted,))


def _quantile_rule(ctx: RuleContext, call: Call, kind: str):
    """``jnp.quantile(x, q, axis=1)`` (percentile, nanquantile, nanpercentile): as :func:`_along_rule` lowers a
    median (the rows gathered along a split dim), its result led by ``q``'s dim where ``q`` is a named 1-d array
    (made whole first) rather than a number."""
    q = call.params.get("q")
    method = call.params.get("method")
    if method is not None and not isinstance(method.value, Static):
        raise ctx.error(UnsupportedError, method.original, f"{call.name}(method={ctx.code(method.original)}) "
                        "is not a Python value", "pass method= as a string")
    lowering = _along_rule(ctx, call, kind)
    result = lowering.result
    if q is None or not isinstance(result, Array):
        return lowering
    if isinstance(q.value, Static) and q.value.known and _is_number(q.value.literal):
        return lowering
    if isinstance(q.value, Array) and q.value.layout.rank <= 1:
        lead = q.value.dims
        converts = (Convert(q, Layout(q.value.dims, ((),) * q.value.layout.rank), f"{call.short}'s q"),)
    else:
        raise ctx.error(UnsupportedError, q.original, f"{call.name}'s q={ctx.code(q.original)}: meshify needs a "
                        "number or a named array of at most 1 dim, to know the result's dims",
                        "write q as a number (0.5), or name the array: q: Tensor['quantiles'] = jnp.array([...])")
    out = Layout((*lead, *result.layout.dims), (((),) * len(lead)) + result.layout.axes)
    return replace(lowering, result=Array(out), converts=(*lowering.converts, *converts))


def _is_number(v: object) -> bool:
    return type(v) in (int, float)


for _kind, _reads in (("sort", ("a", "axis", "stable", "descending")),
                      ("argsort", ("a", "axis", "stable", "descending", "dtype")),
                      ("diff", ("a", "n", "axis", "prepend", "append")), ("median", ("a", "axis", "keepdims")),
                      ("nanmedian", ("a", "axis", "keepdims"))):
    op(f"jax.numpy.{_kind}", method=_kind if _kind in ("sort", "argsort") else None, kind=_kind,
       reads=_reads)(_along_rule)
op("jax.nn.glu", kind="glu", reads=("x", "axis"))(_along_rule)
for _kind in _QUANTILES:
    op(f"jax.numpy.{_kind}", kind=_kind, reads=("a", "q", "axis", "method", "keepdims"))(_quantile_rule)
# row-wise library functions (each row along an unsplit dim on its own; along a split dim refused, naming it)
op("jax.numpy.linalg.vector_norm", kind="vector_norm", reads=("x", "axis", "keepdims", "ord"))(_along_rule)
op("jax.nn.standardize", kind="standardize", reads=("x", "axis", "epsilon", "algorithm"))(_along_rule)
op("optax.safe_norm", kind="safe_norm", reads=("x", "min_norm", "ord", "axis", "keepdims"))(_along_rule)
for _kind in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"):
    op(f"jax.lax.{_kind}", kind=f"lax.{_kind}", reads=("operand", "axis", "reverse"))(_along_rule)


# -- top_k -------------------------------------------------------------------------------------------------------


def top_k_dim(k: object) -> str:
    """The name of the dim ``top_k`` returns its ``k`` entries along: ``2?`` for a literal 2 (an inferred
    dim, sized by its name: explain reads it), ``top_k?`` otherwise."""
    return f"{k}{INFERRED}" if type(k) is int and k > 0 else f"top_k{INFERRED}"


@op("jax.lax.top_k", reads=("operand", "k", "axis"))
def _top_k(ctx: RuleContext, call: Call):
    """``values, indices = jax.lax.top_k(x, k)``: along an unsplit dim, as written (a partial sum
    completed first); along a split one, each device's own top ``k`` with their global indices
    all-gathered, then the top ``k`` of those (``mr.top_k``: ``shards * k`` candidates per row cross,
    not the dim).  Other dims keep their splits."""
    x, k_op = call.arg(0, "operand"), call.arg(1, "k")
    if not isinstance(x.value, Array) or k_op is None:
        return unknown_call(ctx, call)
    layout = x.value.layout
    if not isinstance(k_op.value, Static):
        raise ctx.error(UnsupportedError, k_op.original, f"top_k's k={ctx.code(k_op.original)} is an array",
                        "pass k as a Python int (a literal, a config field)")
    # (read where it can be: a literal, a default; else known when the function runs, its dim unsized)
    k = k_op.value.literal if k_op.value.known and type(k_op.value.literal) is int else None
    axis = _literal(ctx, call, "axis", -1)
    if type(axis) is not int or not -layout.rank <= axis < layout.rank:
        raise ctx.error(UnsupportedError, call.node, f"top_k(axis={axis!r}) of a value of {layout.rank} dims",
                        "pass an int axis in range")
    axis %= layout.rank
    whole = layout.with_partial(())
    dims = (*layout.dims[:axis], top_k_dim(k), *layout.dims[axis + 1:])
    axes = (*layout.axes[:axis], (), *layout.axes[axis + 1:])
    result = TupleValue((Array(Layout(dims, axes)), Array(Layout(dims, axes))))
    split = layout.axes[axis]
    if not split:
        return Lowering(result, (Convert(x, whole, "top_k"),))
    shards = ctx.mesh.size(split)
    block = ctx.sizes.get(layout.dims[axis], 0) // shards
    candidates = top_k_dim(min(k, block) if block and k is not None else k)
    gathered = Layout((*layout.dims[:axis], candidates, *layout.dims[axis + 1:]), axes)
    reason = (f"top_k over {axes_text(split)}: each device's top {ctx.code(k_op.original)} of split "
              f"'{layout.dims[axis]}' of {ctx.code(x.original)!r} with their global indices all-gathered, then the "
              f"top {ctx.code(k_op.original)} of those")
    emitted = (Emitted("top_k", split, gathered, layout.dims[axis], reason),
               Emitted("top_k_indices", split, gathered, layout.dims[axis], reason, frozenset({1})))
    return Lowering(result, (Convert(x, whole, "top_k"),), "{mr}.top_k({x}, {k}, axis={axis}, axis_name={axes})",
                    (("x", Ref(0)), ("k", k_op.node), ("axis", axis), ("axes", MeshAxes(split))), emitted)
