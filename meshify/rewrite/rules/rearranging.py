"""einops: ``rearrange``, ``repeat`` and ``reduce`` of named dims, read from their patterns.

An einops pattern names every axis, as meshify names dims, so a call keeps its text and runs on each
device's block.  The left side matches the operand's dims: an axis alone is that dim (its name and
split carried), a group ``(h d)`` splits one dim into axes, the first of which (the major part) takes
the dim's split; ``...`` stands for the dims it covers, as they are.  The right side builds the
result's dims: an axis alone is its dim, a group merges axes into one dim, which is split where only
its first axis is (a later axis split would leave each device a strided piece); a ``1`` or ``()`` is a
size-1 dim.  ``repeat``'s new axes are whole; ``reduce`` over a split axis leaves a partial sum
(``"sum"``; ``"mean"``: the local mean over the shard count) for the interpreter to complete where a
whole value is needed, and is refused for other reductions.

Each length passed by keyword whose axis is split is divided by its shard count (a literal at rewrite
time, else ``mr.shard_size`` checking the division when the function runs), so that einops checks and
infers the local sizes.  rearrange, repeat and reduce by sum or mean are linear: a partial sum stays
one.  Dims split off a dim are named ``<axis>?`` (the mark says meshify chose the name, a hint renames
them), and merging them back in the same pattern gives the dim's name again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from meshify.annotate._types import BROADCAST, INFERRED, Layout
from meshify.errors import LayoutError, UnsupportedError
from meshify.rewrite._collectives import axes_text
from meshify.rewrite._values import Array, Static
from meshify.rewrite.rules._api import At, Call, Convert, Lowering, RuleContext, op, unknown_call
from meshify.rewrite.rules.shapes import _shard_size, sectioned_moves

Axes = tuple[str, ...]

_TOKEN = re.compile(r"\s*(\.\.\.|\(|\)|[A-Za-z_]\w*|\d+)")
#: A group of the pattern: its axes' names (none for a size-1 ``1`` or ``()``), or ``...``.
_ELLIPSIS = ("...",)


@dataclass(frozen=True)
class _Axis:
    """An elementary axis of a pattern: the dim it is (its name in the result) and its mesh axes."""

    dim: str
    axes: Axes


def _side(ctx: RuleContext, node, text: str, pattern: str) -> list[tuple[str, ...]]:
    """One side of a pattern as groups, refusing what meshify does not read (anonymous lengths)."""
    groups: list[tuple[str, ...]] = []
    pos, open_group = 0, None
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ctx.error(UnsupportedError, node, f"einops pattern {pattern!r}: cannot read {text[pos:].strip()!r}",
                            "write axes as names, groups in parentheses, 1 for a size-1 axis, ... for the rest")
        token, pos = match.group(1), match.end()
        if token == "(":
            if open_group is not None:
                raise ctx.error(UnsupportedError, node, f"einops pattern {pattern!r}: nested parentheses",
                                "write one level of groups")
            open_group = []
        elif token == ")":
            if open_group is None:
                raise ctx.error(UnsupportedError, node, f"einops pattern {pattern!r}: unbalanced parentheses",
                                "close each group once")
            groups.append(tuple(open_group))
            open_group = None
        elif token.isdigit():
            if token != "1":
                raise ctx.error(UnsupportedError, node, f"einops pattern {pattern!r}: anonymous axis {token}",
                                f"name the axis and pass its length by keyword (... -> ... (r d), r={token})")
            if open_group is None:
                groups.append(())
        elif token == "...":
            if open_group is not None:
                raise ctx.error(UnsupportedError, node, f"einops pattern {pattern!r}: ... inside a group",
                                "name the axes of the group")
            groups.append(_ELLIPSIS)
        elif open_group is not None:
            open_group.append(token)
        else:
            groups.append((token,))
    if open_group is not None:
        raise ctx.error(UnsupportedError, node, f"einops pattern {pattern!r}: unbalanced parentheses",
                        "close each group once")
    return groups


def _group_name(ctx: RuleContext, names: tuple[str, ...], axes: dict[str, _Axis],
                sources: dict[tuple[str, ...], str]) -> str:
    """The dim a group of axes merges into: the dim they were split from (here or by an earlier
    reshape), else their names joined (inferred)."""
    # (not an earlier reshape's origins: pattern letters are any function's, h? and d? of unrelated dims)
    parts = tuple(axes[n].dim for n in names)
    return sources.get(names) or "_".join(p.rstrip(INFERRED) for p in parts) + INFERRED


def _einops(ctx: RuleContext, call: Call, kind: str) -> Lowering:
    x = call.params.get("tensor")
    if x is None or not isinstance(x.value, Array):
        return unknown_call(ctx, call)
    pattern_op = call.params.get("pattern")
    pattern = pattern_op.value.literal if pattern_op is not None and isinstance(pattern_op.value, Static) \
        and pattern_op.value.known else None
    node = pattern_op.original if pattern_op is not None else call.node
    if not isinstance(pattern, str) or pattern.count("->") != 1:
        raise ctx.error(UnsupportedError, node, f"einops.{kind} with a pattern meshify cannot read "
                        f"({ctx.code(node)})", "write the pattern as a string literal with one '->'")
    left_text, right_text = pattern.split("->")
    left, right = _side(ctx, node, left_text, pattern), _side(ctx, node, right_text, pattern)
    layout = x.value.layout
    lengths = {k: o for k, o in call.params.items() if k not in ("tensor", "pattern", "reduction")}
    fixed = [g for g in left if g != _ELLIPSIS]
    covered = layout.rank - len(fixed) if _ELLIPSIS in left else 0
    if left.count(_ELLIPSIS) > 1 or right.count(_ELLIPSIS) > 1 or covered < 0 or \
            (_ELLIPSIS not in left and len(left) != layout.rank) or ((_ELLIPSIS in left) != (_ELLIPSIS in right)):
        raise ctx.error(LayoutError, node, f"einops pattern {pattern!r} does not fit {ctx.code(x.original)!r} of "
                        f"dims {list(layout.dims)}", "give the left side one group per dim (or ... for the rest)")
    # -- the left side: each axis's dim and split -------------------------------------------------------
    axes: dict[str, _Axis] = {}
    sources: dict[tuple[str, ...], str] = {}  # a group split off one dim -> that dim's name
    majors: dict[str, str] = {}  # the first axis of a group split off a split dim -> that dim
    sectioned: tuple[int, int] | None = None  # (dim, sections) cut apart before the pattern
    i = 0
    for group in left:
        if group == _ELLIPSIS:
            for k in range(covered):
                axes[f"...{k}"] = _Axis(layout.dims[i + k], layout.axes[i + k])
            i += covered
            continue
        dim, split = layout.dims[i], layout.axes[i]
        if not group and split:
            raise ctx.error(LayoutError, node, f"einops pattern {pattern!r} reads dim {dim!r} as size 1, but it is "
                            f"split over {axes_text(split)}", "name the axis in the pattern")
        if len(group) == 1:
            axes[group[0]] = _Axis(dim, split)
        elif group:
            names = tuple(n + INFERRED for n in group)
            first = _literal_length(lengths.get(group[0]))
            taker = 0
            if split and first is not None and first > 1 and first % ctx.mesh.size(split):
                # "b n (three h d) -> three b h n d", three=3, with the fused dim split: cut into its 3 sections
                # first, the heads taking the split (as a reshape of timm's fused QKV)
                sectioned, taker = (i, first), 1
            for k, name in enumerate(group):
                axes[name] = _Axis(names[k], split if k == taker else ())
            sources[group] = dim
            if split:
                majors[group[taker]] = dim
        i += 1
    for name in (n for g in right if g != _ELLIPSIS for n in g):
        if name not in axes:
            if kind != "repeat" or name not in lengths:
                raise ctx.error(LayoutError, node, f"einops pattern {pattern!r}: axis {name!r} is not on the left",
                                f"pass its length by keyword ({name}=...)" if kind == "repeat"
                                else "name each axis of the result on the left")
            axes[name] = _Axis(name + INFERRED, ())  # a new axis repeat makes: whole on every device
    # -- the right side: the result's dims ---------------------------------------------------------------
    dims: list[str] = []
    out_axes: list[Axes] = []
    for group in right:
        if group == _ELLIPSIS:
            for k in range(covered):
                dims.append(axes[f"...{k}"].dim)
                out_axes.append(axes[f"...{k}"].axes)
        elif not group:
            dims.append(BROADCAST)
            out_axes.append(())
        elif len(group) == 1:
            dims.append(axes[group[0]].dim)
            out_axes.append(axes[group[0]].axes)
        else:
            later = next((n for n in group[1:] if axes[n].axes), None)
            if later is not None:
                raise ctx.error(UnsupportedError, node, f"einops pattern {pattern!r} merges ({' '.join(group)}) "
                                f"but {later!r} ({axes[later].dim}) is split over {axes_text(axes[later].axes)} and "
                                "is not the group's first axis: each device would hold a strided piece",
                                f"put {later!r} first in the group, or map {axes[later].dim.rstrip(INFERRED)!r} to no "
                                "mesh axis")
            dims.append(_group_name(ctx, group, axes, sources))
            out_axes.append(axes[group[0]].axes)
    reduced = [n for n in axes if not n.startswith("...") and not any(n in g for g in right if g != _ELLIPSIS)]
    if reduced and kind != "reduce":
        raise ctx.error(LayoutError, node, f"einops pattern {pattern!r} drops axes {reduced} (only reduce does)",
                        "name every axis on both sides")
    reduction = call.params.get("reduction")
    how = reduction.value.literal if reduction is not None and isinstance(reduction.value, Static) \
        and reduction.value.known else None
    linear = kind != "reduce" or how in ("sum", "mean")  # a partial sum stays one
    split_reduced = tuple(a for n in reduced for a in axes[n].axes)
    template: str | None = None
    fill: tuple = ()
    notes: tuple[str, ...] = ()
    if split_reduced:
        names = ", ".join(f"'{axes[n].dim}'" for n in reduced if axes[n].axes)
        if not linear:
            assert reduction is not None
            raise ctx.error(UnsupportedError, reduction.original,
                            f"einops.reduce by {ctx.code(reduction.original)} over split {names}: only 'sum' and "
                            "'mean' over a split axis are modelled",
                            f"reduce over the split axes with jnp.{how if how in ('max', 'min', 'prod') else 'max'}"
                            "(x, axis=...) (its rule runs the collective), or map them to no mesh axis")
        if how == "mean":
            shards = ctx.mesh.size(split_reduced)
            template, fill = "({call} / {shards})", (("shards", shards),)
            notes = (f"mean over split {names}: local mean / {shards} shards, summed later",)
    partial = (set(layout.partial) | set(split_reduced)) if linear else set()
    # -- lengths of split axes: per shard ------------------------------------------------------------------
    replace = []
    for name, operand in lengths.items():
        if name in axes and axes[name].axes:
            shards = ctx.mesh.size(axes[name].axes)
            local = _shard_size(ctx, operand, operand.original, shards, axes[name].dim.rstrip(INFERRED),
                                majors.get(name), what=f"einops length {name}=")
            if local is not None:
                replace.append((At(call.position(operand)), local))
    source = layout if linear else layout.with_partial(())
    result = Array(Layout(tuple(dims), tuple(out_axes), frozenset(partial)), x.value.origin)
    wrap, emitted = sectioned_moves(ctx, x, layout, *sectioned) if sectioned is not None else (None, ())
    return Lowering(result, (Convert(x, source, kind, wrap=wrap),), template, fill, emitted=emitted, notes=notes,
                    replace=tuple(replace))


def _literal_length(operand) -> int | None:
    """A length passed by keyword as an int literal (``three=3``), else None."""
    value = operand.value if operand is not None else None
    return value.literal if isinstance(value, Static) and value.known and type(value.literal) is int else None


@op("einops.rearrange", reads=("tensor", "pattern", "axes_lengths"))
def _rearrange(ctx: RuleContext, call: Call) -> Lowering:
    return _einops(ctx, call, "rearrange")


@op("einops.repeat", reads=("tensor", "pattern", "axes_lengths"))
def _repeat(ctx: RuleContext, call: Call) -> Lowering:
    return _einops(ctx, call, "repeat")


@op("einops.reduce", reads=("tensor", "pattern", "reduction", "axes_lengths"))
def _reduce(ctx: RuleContext, call: Call) -> Lowering:
    return _einops(ctx, call, "reduce")
