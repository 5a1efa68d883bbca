"""Layout planning: which collectives turn one layout into another, and split choices.

Pure functions of layouts and the mesh; no CST here.  After ``plan_conversion`` the
steps, applied in order, turn a value of layout ``src`` into one of layout ``dst``
moving the fewest bytes this planner knows: a partial sum is materialised by
``psum_scatter`` where ``dst`` splits a dim over that axis, else ``psum``; an axis
moving between dims is one ``all_to_all``; a dim losing splits is an ``all_gather``
of the minor axes; a dim gaining splits is a free local slice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from meshify.annotate._types import Axes, Layout, MeshSpec
from meshify.rewrite._collectives import collective

__all__ = ["Step", "plan_conversion", "choose_splits", "step_result"]


@dataclass(frozen=True, slots=True)
class Step:
    """One collective (or local slice) on one value.

    kind: one of :data:`meshify.rewrite._collectives.STEP_KINDS`.
    axes: the mesh axes it runs over (major first).
    dim: the dim it acts on (for ``all_to_all``: the dim that is gathered).
    to_dim: for ``all_to_all``, the dim that becomes split.
    """

    kind: str
    axes: Axes
    dim: int = -1
    to_dim: int = -1


def plan_conversion(src: Layout, dst: Layout, mesh: MeshSpec) -> list[Step]:
    """The steps that take ``src`` to ``dst`` (same dims; ``dst.partial`` within ``src.partial``)."""
    assert src.dims == dst.dims, (src, dst)
    # (a whole value is no partial sum: taken as one, the psum completing it would count it once per device)
    assert dst.partial <= src.partial, (src, dst)
    cur = list(src.axes)
    steps: list[Step] = []
    to_psum: list[str] = []
    for axis in mesh.order(src.partial - dst.partial):
        dim = _scatter_dim(cur, dst, axis)
        if dim is None:
            to_psum.append(axis)
        else:
            steps.append(Step("psum_scatter", (axis,), dim))
            cur[dim] = cur[dim] + (axis,)
    if to_psum:
        steps.append(Step("psum", tuple(to_psum)))
    steps += _all_to_alls(cur, dst)
    steps += _slices(cur, dst, only_free=True)
    steps += _gathers(cur, dst)
    steps += _slices(cur, dst, only_free=False)
    assert tuple(cur) == dst.axes, (src, dst, steps)
    return steps


def _used(cur: Sequence[Axes]) -> set[str]:
    return {a for axes in cur for a in axes}


def _scatter_dim(cur: list[Axes], dst: Layout, axis: str) -> int | None:
    if axis in _used(cur):
        return None
    for i, want in enumerate(dst.axes):
        have = cur[i]
        if len(want) > len(have) and want[: len(have)] == have and want[len(have)] == axis:
            return i
    return None


def _all_to_alls(cur: list[Axes], dst: Layout) -> list[Step]:
    steps = []
    for i, have in enumerate(cur):
        if not have or dst.axes[i] != have[:-1]:
            continue
        axis = have[-1]
        for j, want in enumerate(dst.axes):
            if j != i and want == cur[j] + (axis,):
                steps.append(Step("all_to_all", (axis,), i, j))
                cur[i], cur[j] = have[:-1], want
                break
    return steps


def _gathers(cur: list[Axes], dst: Layout) -> list[Step]:
    steps = []
    for i, have in enumerate(cur):
        keep = _common_prefix(have, dst.axes[i])
        if len(have) > keep:
            steps.append(Step("all_gather", have[keep:], i))
            cur[i] = have[:keep]
    return steps


def _slices(cur: list[Axes], dst: Layout, *, only_free: bool) -> list[Step]:
    steps = []
    for i, want in enumerate(dst.axes):
        have = cur[i]
        if len(want) <= len(have) or want[: len(have)] != have:
            continue
        extra = want[len(have):]
        if only_free and set(extra) & _used(cur):
            continue
        steps.append(Step("slice", extra, i))
        cur[i] = want
    return steps


def _common_prefix(a: Axes, b: Axes) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def choose_splits(letters: Sequence[str], candidates: dict[str, list[Axes]],
                  preferred: dict[str, Axes], weights: dict[str, int] | None = None,
                  kept: frozenset[str] = frozenset()) -> dict[str, Axes]:
    """Picks at most one split per letter so that no mesh axis splits two letters.

    ``candidates[letter]`` lists the splits the operands already have, most valuable
    operand first; ``preferred`` is what the layout rules would give; ``weights`` the
    size of the largest operand holding each letter split.  Letters whose split matches
    the rules are served first; then the letters in ``kept`` (a contraction's output dims:
    keeping their split keeps the result split, where splitting a contracted dim instead would
    leave a partial sum to reduce and the other operand to re-split; so a weight split over the
    data axis is the side gathered, as FSDP does); then the larger operand's before the
    smaller's, so that when one axis would split two letters the smaller side is gathered.
    """
    chosen: dict[str, Axes] = {}
    taken: set[str] = set()
    weights = weights or {}
    order = sorted(letters, key=lambda l: (preferred.get(l, ()) not in candidates.get(l, []), l not in kept,
                                           -weights.get(l, 0)))
    for letter in order:
        options = sorted(candidates.get(letter, []), key=lambda c: c != preferred.get(letter, ()))
        for option in options:
            if not set(option) & taken:
                chosen[letter] = option
                taken |= set(option)
                break
        else:
            chosen[letter] = ()
    return chosen


def step_result(step: Step, layout: Layout) -> Layout:
    """The layout a value has after ``step``."""
    effect = collective(step.kind).effect
    assert effect is not None, step
    return effect(layout, step.axes, step.dim, step.to_dim)
