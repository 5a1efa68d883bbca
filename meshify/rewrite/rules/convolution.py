"""Convolutions: ``jax.lax.conv_general_dilated``, ``jax.lax.conv``, ``jax.lax.conv_with_general_padding``.

A convolution is a contraction over the input features and the kernel's window, batched over the
images and mapped over their spatial dims.  So, as for einsum (:func:`contractions.contract`): a
split batch dim stays split (no communication); an input-feature dim split in the image and the
kernel is contracted locally and the result is a partial sum (deferred psum); a split output-feature
dim of the kernel stays split.  The kernel's window dims are always whole.

A split spatial dim of the image needs the rows of its neighbours' blocks that the window reaches
across the shard boundary: the call becomes ``mr.halo_conv`` (:mod:`meshify.runtime._spatial`),
which exchanges exactly that halo with ``ppermute`` (rows, columns, and the corners of two split
dims; zeros at the image border) and convolves the extended block.  Its width follows from the
kernel size, dilation, stride and padding; where those are known when rewriting (literals, and
dim sizes from ``@mesh(dims=...)``) each exchange is recorded with its bytes; otherwise the runtime
checks at trace time.  An output that does not line up with the shard boundaries (a VALID window
shrinking the dim: 16 rows to 14) is split into equal blocks again, each device taking the rows its
windows cover from its neighbours; one whose rows do not split evenly, or whose windows reach beyond
the neighbouring blocks, is refused here, at its place.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

import libcst as cst

from meshify._halos import reblock_halos
from meshify.annotate._types import BROADCAST, Layout
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._collectives import axes_text, halo_kind
from meshify.rewrite._values import Array, Opaque, Operand, Static
from meshify.rewrite.rules._api import At, Call, Convert, Emitted, Lowering, Ref, RuleContext, op, unknown_call
from meshify.rewrite.rules.contractions import contract, forms_partial
from meshify.rewrite.rules.shapes import _shard_size

# Letters for contract(): batch, input features (shared with the kernel when ungrouped), output
# features, the kernel's input features when grouped, then spatial and window dims.
_BATCH, _FEATURE, _OUT, _GROUPED_IN = "a", "b", "c", "e"
_SPATIAL, _WINDOW = "HWDUVX", "KLMPQR"
_CONV_DN = frozenset({"jax.lax.ConvDimensionNumbers", "jax.lax.conv_dimension_numbers"})
_OPTIONAL = ("lhs_dilation", "rhs_dilation", "dimension_numbers", "feature_group_count", "precision",
             "preferred_element_type")


@op("jax.lax.conv_general_dilated", reads=("lhs", "rhs", "window_strides", "padding", *_OPTIONAL))
@op("jax.lax.conv", "jax.lax.conv_with_general_padding", reads=None)
def _conv(ctx: RuleContext, call: Call):
    lhs, rhs = call.params.get("lhs"), call.params.get("rhs")
    if lhs is None or rhs is None or not (isinstance(lhs.value, Array) or isinstance(rhs.value, Array)):
        return unknown_call(ctx, call)
    rank = _rank(lhs) or _rank(rhs)
    if _rank(lhs) is not None and _rank(rhs) is not None and _rank(lhs) != _rank(rhs):
        raise ctx.error(LayoutError, call.node, f"{_short(call)}: the image has {_rank(lhs)} dims but the kernel "
                        f"{_rank(rhs)}", "give the kernel one dim per image dim (out and in features, then the window)")
    specs = _dimension_numbers(ctx, call, rank)
    groups = _literal(call, "feature_group_count", 1)
    lhs_letters, rhs_letters, out_letters = _letters(specs, rank, grouped=groups != 1)
    if groups != 1:
        local = _grouped_by_shard(ctx, call, specs, (lhs_letters, rhs_letters, out_letters))
        if local is not None:
            return local
    whole_window = _whole_window(rhs, specs)
    value, converts, contraction = contract(ctx, [lhs, whole_window], [lhs_letters, rhs_letters], out_letters,
                                            call.node, "conv")
    converts = [c if c is None or i == 0 else replace(c, operand=rhs) for i, c in enumerate(converts)]
    if groups != 1:
        _check_grouped(ctx, call, groups, specs, converts, value)
    spatial = [converts[0].layout.axes[d] if converts[0] is not None else () for d in specs[0][2:]]
    kept = tuple(c for c in converts if c is not None)
    accumulate = ("preferred_element_type", (lhs, rhs)) if forms_partial(value, [lhs, rhs]) else None
    if not any(spatial):
        return Lowering(value, kept, accumulate=accumulate, contraction=contraction)
    return replace(_halo_lowering(ctx, call, specs, value, kept, spatial), contraction=contraction)


#: jax.lax.conv_transpose's dimension_numbers where none are given, by rank.
_TRANSPOSE_DEFAULTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"),
                       5: ("NHWDC", "HWDIO", "NHWDC")}


@op("jax.lax.conv_transpose", reads=("lhs", "rhs", "strides", "padding", "rhs_dilation", "dimension_numbers",
                                     "transpose_kernel", "precision", "preferred_element_type",
                                     "use_consistent_padding"))
def _conv_transpose(ctx: RuleContext, call: Call):
    """``jax.lax.conv_transpose`` (a decoder's upsampling): batched over the images and contracted over the
    input features as a convolution is (a split batch stays split, split input features give a partial sum,
    split output features stay split; ``transpose_kernel=True`` swaps the kernel's feature dims); a split
    spatial dim is refused (its halo is not modelled: conv_general_dilated with lhs_dilation is)."""
    lhs, rhs = call.params.get("lhs"), call.params.get("rhs")
    if lhs is None or rhs is None or not (isinstance(lhs.value, Array) or isinstance(rhs.value, Array)):
        return unknown_call(ctx, call)
    rank = _rank(lhs) or _rank(rhs)
    if rank is None or (_rank(lhs) is not None and _rank(rhs) is not None and _rank(lhs) != _rank(rhs)):
        raise ctx.error(LayoutError, call.node, "conv_transpose: the image and the kernel need the same number of "
                        "dims", "give the kernel one dim per image dim (the window, then in and out features)")
    o = call.params.get("dimension_numbers")
    given = _dn_literal(ctx, o) if o is not None else None
    if given is None:
        if rank not in _TRANSPOSE_DEFAULTS:
            raise ctx.error(LayoutError, call.node, f"conv_transpose of {rank}-dim operands without "
                            "dimension_numbers", "pass dimension_numbers")
        specs = _permutations(ctx, Operand(Static(), call.node, call.node), _TRANSPOSE_DEFAULTS[rank], rank)
    else:
        specs = _dimension_numbers(ctx, call, rank)
    flip = _literal(call, "transpose_kernel", False)
    if flip is ...:
        raise ctx.error(UnsupportedError, call.params["transpose_kernel"].original, "conv_transpose(transpose_kernel"
                        "=...) that is not a literal", "pass transpose_kernel=True or False")
    if flip:
        specs = (specs[0], (specs[1][1], specs[1][0], *specs[1][2:]), specs[2])
    lhs_letters, rhs_letters, out_letters = _letters(specs, rank, grouped=False)
    value, converts, contraction = contract(ctx, [lhs, _whole_window(rhs, specs)], [lhs_letters, rhs_letters],
                                            out_letters, call.node, "conv_transpose")
    converts = [c if c is None or i == 0 else replace(c, operand=rhs) for i, c in enumerate(converts)]
    spatial = [converts[0].layout.axes[d] if converts[0] is not None else () for d in specs[0][2:]]
    if any(spatial):
        layout = converts[0].layout  # type: ignore[union-attr]
        names = [layout.dims[d] for d, a in zip(specs[0][2:], spatial) if a]
        raise ctx.error(UnsupportedError, call.node, f"conv_transpose along split spatial dim"
                        f"{'s' * (len(names) > 1)} {', '.join(map(repr, names))} ({layout.describe()})",
                        "map them to no mesh axis, or upsample with jax.lax.conv_general_dilated(..., lhs_dilation="
                        "strides), whose halo meshify exchanges")
    accumulate = ("preferred_element_type", (lhs, rhs)) if forms_partial(value, [lhs, rhs]) else None
    return Lowering(value, tuple(c for c in converts if c is not None), accumulate=accumulate,
                    contraction=contraction)


def _short(call: Call) -> str:
    return call.name.rsplit(".", 1)[-1]


def _rank(o) -> int | None:
    return o.value.layout.rank if isinstance(o.value, Array) else None


def _literal(call: Call, name: str, default: object = None) -> object:
    """A parameter's literal value, its default where not given, or ``...`` where not a literal."""
    o = call.params.get(name)
    if o is None:
        return default
    if isinstance(o.value, Static) and o.value.known:
        return default if o.value.literal is None else o.value.literal
    return ...


# -- dimension numbers ------------------------------------------------------------------------------


def _dimension_numbers(ctx: RuleContext, call: Call, rank: int | None) -> tuple[tuple[int, ...], ...]:
    """``(lhs_spec, rhs_spec, out_spec)``: each operand's dims as (batch or out-features, features, then
    spatial dims in the kernel's order), as ``jax.lax.ConvDimensionNumbers`` has them."""
    o = call.params.get("dimension_numbers")
    given = _dn_literal(ctx, o) if o is not None else None
    if rank is None:
        raise ctx.error(LayoutError, call.node, f"{_short(call)}: cannot infer the dims of the image or the kernel",
                        "give the image a Tensor hint (x: Tensor[\"batch\", \"h\", \"w\", \"c\"])")
    if given is None:
        specs = (tuple(range(rank)),) * 3
    elif all(isinstance(s, str) for s in given):
        specs = _permutations(ctx, o, given, rank)
    else:
        specs = tuple(tuple(s) for s in given)
    if any(sorted(s) != list(range(rank)) for s in specs):
        raise ctx.error(LayoutError, o.original if o is not None else call.node,
                        f"{_short(call)}: dimension_numbers {given!r} do not name each of the {rank} dims once",
                        f"write one letter (or index) per dim of the {rank}-dim operands")
    return specs


def _dn_literal(ctx: RuleContext, o: Operand):
    """dimension_numbers as written: None, three strings, or three index tuples (ConvDimensionNumbers)."""
    if isinstance(o.value, Static) and o.value.known:
        literal = o.value.literal
        if literal is None or (isinstance(literal, tuple | list) and len(literal) == 3):
            return literal
    node = o.original
    if isinstance(node, cst.Name):  # dn = jax.lax.conv_dimension_numbers(x.shape, k.shape, (...)) in the body
        node = _only_assignment(ctx, node)
    if isinstance(node, cst.Call) and ctx.qualified_names(node.func) & _CONV_DN:
        args = {a.keyword.value if a.keyword else i: a.value for i, a in enumerate(node.args)}
        parts = ([args.get(k, args.get(i)) for i, k in enumerate(("lhs_spec", "rhs_spec", "out_spec"))]
                 if "conv_dimension_numbers" not in ctx.code(node.func) else [args.get(2, args.get("dimension_numbers"))])
        try:
            values = [ast.literal_eval(ctx.code(p)) for p in parts if p is not None]
        except (ValueError, SyntaxError):
            values = []
        if len(values) == 3:
            return tuple(values)
        if len(values) == 1 and isinstance(values[0], tuple | list) and len(values[0]) == 3:
            return tuple(values[0])
    raise ctx.error(UnsupportedError, node, f"dimension_numbers={ctx.code(node)} is not a literal meshify can read",
                    'write it as a literal: dimension_numbers=("NHWC", "HWIO", "NHWC"), or '
                    "jax.lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))")


def _only_assignment(ctx: RuleContext, name: cst.Name) -> cst.BaseExpression:
    """The value of the one plain assignment ``name = value`` in the function's body (the statements
    of its top block), else ``name`` itself."""
    body = ctx.function.body
    lines = body.body if isinstance(body, cst.IndentedBlock) else ()
    values = [stmt.value for line in lines if isinstance(line, cst.SimpleStatementLine)
              for stmt in line.body if isinstance(stmt, cst.Assign | cst.AnnAssign)
              and any(isinstance(t, cst.Name) and t.value == name.value
                      for t in ([a.target for a in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]))]
    assigned = [n for n in _names_assigned(ctx.function.body) if n == name.value]
    return values[0] if len(values) == 1 and len(assigned) == 1 and values[0] is not None else name


def _names_assigned(node: cst.CSTNode) -> list[str]:
    """Every name bound anywhere in ``node`` (assignments, loop targets, walrus, with ... as)."""
    found: list[str] = []

    class Visitor(cst.CSTVisitor):
        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            found.extend(n.value for n in _target_names(target.target))

        def visit_AnnAssign(self, stmt: cst.AnnAssign) -> None:
            found.extend(n.value for n in _target_names(stmt.target))

        def visit_AugAssign(self, stmt: cst.AugAssign) -> None:
            found.extend(n.value for n in _target_names(stmt.target))

        def visit_For(self, stmt: cst.For) -> None:
            found.extend(n.value for n in _target_names(stmt.target))

        def visit_NamedExpr(self, expr: cst.NamedExpr) -> None:
            found.extend(n.value for n in _target_names(expr.target))

        def visit_AsName(self, alias: cst.AsName) -> None:
            found.extend(n.value for n in _target_names(alias.name))

    node.visit(Visitor())
    return found


def _target_names(target: cst.CSTNode) -> list[cst.Name]:
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, cst.Tuple | cst.List):
        return [n for e in target.elements for n in _target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


def _permutations(ctx: RuleContext, o: Operand, given, rank: int) -> tuple[tuple[int, ...], ...]:
    """As ``jax.lax.conv_general_permutations``: spatial dims in the kernel spec's order."""
    lhs, rhs, out = given
    if not len(lhs) == len(rhs) == len(out) == rank:
        raise ctx.error(LayoutError, o.original, f"dimension_numbers {tuple(given)!r} do not have {rank} letters each",
                        f"write {rank} letters per operand, e.g. (\"NHWC\", \"HWIO\", \"NHWC\")")

    def perm(spec: str, pair: str, by_kernel: bool) -> tuple[int, ...]:
        if any(c not in spec for c in pair) or any(c not in rhs for c in spec if c not in pair):
            raise ctx.error(LayoutError, o.original, f"dimension_numbers {tuple(given)!r}: {spec!r} must hold "
                            f"{pair[0]!r}, {pair[1]!r} and the kernel's spatial letters", "fix the letters")
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if by_kernel:
            spatial.sort(key=lambda i: rhs.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *spatial)

    return perm(lhs, "NC", True), perm(rhs, "OI", False), perm(out, "NC", True)


def _letters(specs, rank: int, grouped: bool) -> tuple[str, str, str]:
    """contract()'s subscripts of the image, the kernel and the output."""
    lhs_spec, rhs_spec, out_spec = specs
    lhs, rhs, out = [""] * rank, [""] * rank, [""] * rank
    lhs[lhs_spec[0]], lhs[lhs_spec[1]] = _BATCH, _FEATURE
    rhs[rhs_spec[0]], rhs[rhs_spec[1]] = _OUT, _GROUPED_IN if grouped else _FEATURE
    out[out_spec[0]], out[out_spec[1]] = _BATCH, _OUT
    for i in range(rank - 2):
        lhs[lhs_spec[2 + i]] = out[out_spec[2 + i]] = _SPATIAL[i]
        rhs[rhs_spec[2 + i]] = _WINDOW[i]
    return "".join(lhs), "".join(rhs), "".join(out)


def _whole_window(rhs: Operand, specs) -> Operand:
    """The kernel as contract() should plan it: its window dims whole (the interpreter gathers a split
    one), so that they are never taken for a contracted dim split in both operands."""
    if not isinstance(rhs.value, Array):
        return rhs
    layout = rhs.value.layout
    axes = list(layout.axes)
    for d in specs[1][2:]:
        axes[d] = ()
    return Operand(Array(Layout(layout.dims, tuple(axes), layout.partial), rhs.value.origin), rhs.original, rhs.node)


def _grouped_by_shard(ctx: RuleContext, call: Call, specs, letters) -> Lowering | None:
    """A grouped convolution (a depthwise one: ``feature_group_count=x.shape[-1]``) whose input features are
    split: each device holds whole groups (its block of channels and the kernel's block of output features,
    over the same axes), so it convolves them locally with its share of the groups (the count divided by the
    shards, checked to divide).  None where the features are whole (the general rule), or where the image's
    spatial dims are split too (the halo path's)."""
    lhs, rhs = call.params["lhs"], call.params["rhs"]
    lhs_spec, rhs_spec, _ = specs
    split = lhs.value.layout.axes[lhs_spec[1]] if isinstance(lhs.value, Array) else ()
    if not split and isinstance(rhs.value, Array):
        split = rhs.value.layout.axes[rhs_spec[0]]
    if not split or (isinstance(lhs.value, Array) and any(lhs.value.layout.axes[d] for d in lhs_spec[2:])):
        return None
    if isinstance(rhs.value, Array) and rhs.value.layout.axes[rhs_spec[0]] not in ((), split):
        return None  # the kernel's output features split otherwise: refused by the general rule
    def masked(o: Operand, dims: Sequence[int]) -> Operand:
        if not isinstance(o.value, Array):
            return o
        axes = list(o.value.layout.axes)
        for d in dims:
            axes[d] = ()
        return Operand(Array(Layout(o.value.layout.dims, tuple(axes), o.value.layout.partial), o.value.origin),
                       o.original, o.node)

    operands = [masked(lhs, [lhs_spec[1]]), masked(rhs, [rhs_spec[0], *rhs_spec[2:]])]
    value, converts, contraction = contract(ctx, operands, list(letters[:2]), letters[2], call.node, "conv")
    out: list[Convert] = []
    for c, m, o, dim in zip(converts, operands, (lhs, rhs), (lhs_spec[1], rhs_spec[0])):
        if not isinstance(o.value, Array):
            continue
        base = c.layout if c is not None else m.value.layout
        axes = list(base.axes)
        axes[dim] = split
        if any(set(a) & set(split) for i, a in enumerate(axes) if i != dim):
            return None  # the feature split's axes taken by another dim: the general rule's refusal
        target = Layout(base.dims, tuple(axes), base.partial)
        if target != o.value.layout:
            out.append(Convert(o, target, "the grouped convolution"))
    result = value.layout
    out_dim = specs[2][1]
    if any(a and set(a) & set(split) for i, a in enumerate(result.axes) if i != out_dim) or result.partial:
        return None
    result_axes = list(result.axes)
    result_axes[out_dim] = split
    count = call.params["feature_group_count"]
    shards = ctx.mesh.size(split)
    dim = (lhs.value.layout.dims[lhs_spec[1]] if isinstance(lhs.value, Array) else "groups").rstrip("?")
    local = _shard_size(ctx, count, count.original, shards, dim, what="feature_group_count")
    replaced = ((At(call.position(count)), local),) if local is not None else ()
    return Lowering(Array(Layout(result.dims, tuple(result_axes)), value.origin), tuple(out), replace=replaced,
                    contraction=contraction)


def _check_grouped(ctx: RuleContext, call: Call, groups, specs, converts, value) -> None:
    """A grouped (depthwise) convolution runs locally only with its feature dims whole."""
    checks = [(converts[0], specs[0][1], "input-feature"), (converts[1], specs[1][0], "output-feature"),
              (converts[1], specs[1][1], "kernel input-feature")]
    for convert, dim, what in checks:
        if convert is not None and convert.layout.axes[dim]:
            name = convert.layout.dims[dim]
            raise ctx.error(UnsupportedError, convert.operand.original,
                            f"{_short(call)}(feature_group_count={ctx.code(call.params['feature_group_count'].original)})"
                            f" with the {what} dim {name!r} split over {axes_text(convert.layout.axes[dim])}: meshify "
                            "runs a grouped convolution only with its feature dims whole",
                            f"map {name!r} to no mesh axis (rules={{{name!r}: None}})")


# -- split spatial dims: halo exchange ---------------------------------------------------------------


def _halo_lowering(ctx: RuleContext, call: Call, specs, value, converts, spatial) -> Lowering:
    lhs = call.params["lhs"]
    layout = converts[0].layout
    _refuse_lhs_dilation(ctx, call, spatial)
    halos = _rewrite_time_halos(ctx, call, specs, layout, spatial)
    rhs = call.params["rhs"]
    template = ["{mr}.halo_conv({lhs}, {rhs}, {window_strides}, {padding}"]
    fill: list = [("lhs", Ref(0)), ("rhs", Ref(1) if len(converts) > 1 else rhs.node),
                  ("window_strides", call.params["window_strides"].node),
                  ("padding", call.params["padding"].node)]
    for name in _OPTIONAL:
        o = call.params.get(name)
        if o is not None:
            if isinstance(o.value, Array) or (isinstance(o.value, Opaque) and name != "dimension_numbers"):
                raise ctx.error(UnsupportedError, o.original, f"{_short(call)}({name}={ctx.code(o.original)}) must "
                                "be a Python value, not an array", f"write {name}= as a literal")
            template.append(f", {name}={{{name}}}")
            fill.append((name, o.node))
    template.append(", spatial_axes={spatial_axes})")
    fill.append(("spatial_axes", cst.parse_expression(_axes_code(spatial))))
    emitted = _exchanges(ctx, lhs, layout, specs[0][2:], spatial, halos)
    return Lowering(value, converts, "".join(template), tuple(fill), emitted)


def _axes_code(spatial) -> str:
    items = ["None" if not a else (f'"{a[0]}"' if len(a) == 1 else "(" + ", ".join(f'"{x}"' for x in a) + ")")
             for a in spatial]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _refuse_lhs_dilation(ctx: RuleContext, call: Call, spatial) -> None:
    dilation = _literal(call, "lhs_dilation", None)
    if dilation is None:
        return
    o = call.params["lhs_dilation"]
    if dilation is ... or any(d != 1 for d, a in zip(dilation, spatial) if a):
        raise ctx.error(UnsupportedError, o.original, f"{_short(call)}(lhs_dilation={ctx.code(o.original)}) along "
                        "a split spatial dim (a transposed convolution)",
                        "map that dim to no mesh axis, or upsample (jnp.repeat) and then convolve")


def _rewrite_time_halos(ctx: RuleContext, call: Call, specs, layout: Layout, spatial) -> list[Halo | None]:
    """Each spatial dim's halo ``(rows before, rows after)`` where the window, stride and padding are
    known now (None where not, or not split); a convolution whose output cannot split at the shard
    boundaries is refused here."""
    rhs = call.params["rhs"]
    strides = _literal(call, "window_strides")
    dilation = _literal(call, "rhs_dilation", None)
    padding = _literal(call, "padding")
    out: list[Halo | None] = []
    for i, (dim, axes) in enumerate(zip(specs[0][2:], spatial)):
        kernel = ctx.sizes.get(rhs.value.dims[specs[1][2 + i]]) if isinstance(rhs.value, Array) else None
        if not axes or kernel is None or strides is ... or dilation is ... or padding is ...:
            out.append(None)
            continue
        stride = strides[i] if isinstance(strides, tuple | list) else 1
        window = (kernel - 1) * (dilation[i] if dilation else 1) + 1
        out.append(window_halo(ctx, call, _short(call), layout.dims[dim], axes, window, stride, padding, i))
    return out


class Halo(NamedTuple):
    """The rows a block of a windowed op reads from each neighbour along one split dim: ``before`` and
    ``after``; ``span``: the rows each device's windows cover (None where the sizes are known only at trace
    time).  ``aligned``: the output lines up with the shard boundaries (a fixed halo, the corners from the
    diagonal devices); where one split dim's does not, the runtime re-blocks each split dim's output in
    turn (a later dim's exchange carries the corners)."""

    before: int
    after: int
    span: int | None = None
    aligned: bool = True


def window_halo(ctx: RuleContext, call: Call, what: str, name: str, axes, window: int, stride: int, padding,
                i: int) -> Halo | None:
    """The halo of a window over spatial dim ``name`` (the ``i``-th windowed dim, split over ``axes``) with
    ``stride`` and ``padding`` (a string or one pair per windowed dim), None where it follows from sizes
    known only at trace time.  An output that lines up with the shard boundaries takes a fixed halo; one
    that does not (a VALID window shrinking the dim, a stride that does not divide a block) is split into
    equal blocks again, each device taking the rows its windows cover.  Refused at the call's ``padding``
    where the output rows do not split evenly, or at ``window_strides`` where a block would need rows
    beyond its neighbours' (sizes from ``@mesh(dims=...)``)."""
    rows = ctx.sizes.get(name)
    shards = ctx.mesh.size(axes)
    lo, hi = _pads(padding, i, window, stride, rows)
    if rows is None:  # SAME padding, or explicit padding totalling window - stride, lines up for any size
        return Halo(lo, max(window - stride - lo, 0)) if lo + hi == window - stride and lo >= 0 else None
    block = rows // shards
    out_rows = (rows + lo + hi - window) // stride + 1 if rows + lo + hi >= window else 0
    if block % stride == 0 and out_rows * stride == rows and lo >= 0:
        halo = Halo(lo, max(window - stride - lo, 0), block - stride + window)
    elif out_rows <= 0 or out_rows % shards:
        o = call.params.get("padding")
        raise ctx.error(UnsupportedError, o.original if o is not None else call.node,
                        f"{what} over spatial dim {name!r} ({rows} rows split over {axes_text(axes)}) with a window "
                        f"of {window}, stride {stride} and padding ({lo}, {hi}) gives {out_rows} output rows, which "
                        f"do not split into {shards} equal blocks",
                        f"choose sizes or padding that give a multiple of {shards} output rows (padding='SAME' keeps "
                        f"rows / stride), or map {name!r} to no mesh axis (rules={{{name!r}: None}})")
    else:
        out_block = out_rows // shards
        span = (out_block - 1) * stride + window
        halo = Halo(*reblock_halos(block, shards, -lo, out_block * stride * shards, span), span, aligned=False)
    if max(halo.before, halo.after) > block:
        o = call.params.get("window_strides")
        raise ctx.error(UnsupportedError, o.original if o is not None else call.node,
                        f"{what} over spatial dim {name!r} ({rows} rows in {shards} blocks) with a window of "
                        f"{window}, stride {stride} and padding ({lo}, {hi}) needs {max(halo.before, halo.after)} rows from a "
                        f"neighbour's block of {block}: a halo must be at most one block",
                        f"use fewer shards along {name!r}, larger images, or a smaller window")
    return halo


def _pads(padding, i: int, window: int, stride: int, rows: int | None) -> tuple[int, int]:
    """The global padding of spatial dim ``i``, as ``jax.lax.padtype_to_pads``."""
    if not isinstance(padding, str):
        lo, hi = padding[i]
        return lo, hi
    if padding.upper() == "VALID":
        return 0, 0
    out = -(-rows // stride) if rows is not None else None
    total = max((out - 1) * stride + window - rows, 0) if rows is not None else max(window - stride, 0)
    return (total - total // 2, total // 2) if padding.upper() == "SAME_LOWER" else (total // 2, total - total // 2)


def _exchanges(ctx: RuleContext, lhs: Operand, layout: Layout, dims, spatial, halos) -> tuple[Emitted, ...]:
    """One record per ppermute: each side of each split dim, and each corner of two."""
    what = ctx.code(lhs.original)
    split = [i for i, a in enumerate(spatial) if a]
    if any(h is not None and not h.aligned for h in halos):
        return _reblocked_exchanges(ctx, what, layout, dims, spatial, halos)
    emitted = []
    for i in split:
        for side in (-1, 1):
            width = None if halos[i] is None else halos[i][0 if side < 0 else 1]
            if width == 0:
                continue
            line = ("row", "column", "slice")[min(i, 2)]
            rows = f"{line}s" if width is None else f"{width} {line}{'s' * (width != 1)}"
            where = "before" if side < 0 else "after"
            source = "previous" if side < 0 else "next"
            emitted.append(_emitted(ctx, layout, [dims[i]], spatial[i], width,
                                    f"halo over {axes_text(spatial[i])}: {rows} of {what!r} {where} its block along "
                                    f"split {layout.dims[dims[i]]!r}, from the {source} device (ppermute; zeros at "
                                    "the image border)" + _unknown(width)))
    for a, b in ((a, b) for n, a in enumerate(split) for b in split[n + 1:]):
        for sa in (-1, 1):
            for sb in (-1, 1):
                wa = None if halos[a] is None else halos[a][0 if sa < 0 else 1]
                wb = None if halos[b] is None else halos[b][0 if sb < 0 else 1]
                if wa == 0 or wb == 0:
                    continue
                cells = None if wa is None or wb is None else wa * wb
                axes = ctx.mesh.order((*spatial[a], *spatial[b]))
                corner = f"{'top' if sa < 0 else 'bottom'}-{'left' if sb < 0 else 'right'}"
                emitted.append(_emitted(ctx, layout, [dims[a], dims[b]], axes, cells,
                                        f"halo over {axes_text(axes)}: the {corner} corner of {what!r} along split "
                                        f"{layout.dims[dims[a]]!r}, {layout.dims[dims[b]]!r}, from the diagonal "
                                        "device (ppermute)" + _unknown(cells)))
    return tuple(emitted)


def _reblocked_exchanges(ctx: RuleContext, what: str, layout: Layout, dims, spatial, halos) -> tuple[Emitted, ...]:
    """The ppermutes of re-blocking each split dim's window output in turn (``mr._window_rows``): its rows
    before and after, on a slab whose earlier re-blocked dims hold their new length (the corners)."""
    emitted = []
    resized: dict[int, int | None] = {}
    for i in (i for i, a in enumerate(spatial) if a):
        halo = halos[i]
        line = ("row", "column", "slice")[min(i, 2)]
        for side in (-1, 1):
            width = None if halo is None else (halo.before if side < 0 else halo.after)
            if width == 0:
                continue
            known = [n for n in resized.values() if n is not None]
            cells = None if width is None or len(known) != len(resized) else width * math.prod(known)
            rows = f"{line}s" if width is None else f"{width} {line}{'s' * (width != 1)}"
            emitted.append(_emitted(ctx, layout, [dims[i], *resized], spatial[i], cells,
                                    f"halo over {axes_text(spatial[i])}: {rows} of {what!r} "
                                    f"{'before' if side < 0 else 'after'} the rows its windows cover along split "
                                    f"{layout.dims[dims[i]]!r} (the output re-blocked), from the "
                                    f"{'previous' if side < 0 else 'next'} device (ppermute)" + _unknown(cells)))
        resized[dims[i]] = None if halo is None else halo.span
    return tuple(emitted)


def _unknown(width) -> str:
    return "" if width is not None else "; how many follows from the kernel's size at trace time"


def _emitted(ctx: RuleContext, layout: Layout, dims, axes, width, reason: str) -> Emitted:
    """A halo exchange on a one-row slab of ``layout`` (the moving dims sized 1), ``width`` times."""
    names = list(layout.dims)
    split = list(layout.axes)
    for d in dims:
        names[d], split[d] = BROADCAST, ()
    return Emitted(halo_kind(width or 1), tuple(axes), Layout(tuple(names), tuple(split)), layout.dims[dims[0]],
                   reason)
