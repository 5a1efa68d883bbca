"""Shrinks a failing program by shrinking the choice sequence that generated it.

``run.py`` draws programs from a seeded :class:`RandomChooser`, which records every choice
(as an offset from its range's low end).  Replaying an edited sequence regenerates a
program (missing choices read as 0, the simplest option), so shrinking the sequence the
way hypothesis does (delete runs of choices, zero them, lower single values) shrinks the
program: fewer statements, simpler ops, smaller meshes and rules, fewer module-level options.
Passes, in order: the shortest failing prefix, each choice lowered, runs deleted, runs zeroed.  A
candidate is kept when it fails the same way (same outcome kind; for an unprovoked rejection, one
with the same error code, unprovoked too) and its sequence is smaller in shortlex order.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from tests.fuzz.check import Outcome, check
from tests.fuzz.programs import Program, RandomChooser, generate

__all__ = ["shrink"]


def _key(choices: list[int]) -> tuple[int, list[int]]:
    return len(choices), choices


def same_way(outcome: Outcome) -> Callable[[Outcome], bool]:
    """Whether another outcome is ``outcome``'s kind of failure (an unprovoked rejection: with its code)."""
    if outcome.kind == "rejected":
        return lambda r: r.kind == "rejected" and not r.provoked and r.code == outcome.code
    return lambda r: r.kind == outcome.kind


def shrink(choices: list[int], program: Program, outcome: Outcome, workdir: Path, *, seconds: float = 120.0,
           tries: int = 400) -> tuple[Program, Outcome]:
    """The smallest program found (within the budget) that fails like ``outcome``."""
    same = same_way(outcome)
    best = (list(choices), program, outcome)
    deadline = time.monotonic() + seconds
    budget = [tries]

    def consider(candidate: list[int]) -> bool:
        nonlocal best
        if budget[0] <= 0 or time.monotonic() > deadline or _key(candidate) >= _key(best[0]):
            return False
        budget[0] -= 1
        chooser = RandomChooser(prefix=candidate)
        try:
            p = generate(chooser, seed=program.seed)
        except Exception:  # a generator bug on an odd sequence: not this failure
            return False
        result = check(p, workdir)
        if not same(result) or _key(chooser.choices) >= _key(best[0]):
            return False
        best = (chooser.choices, p, result)
        return True

    improved = True
    while improved and budget[0] > 0 and time.monotonic() < deadline:
        improved = False
        for edit in (_truncate, _lower, _delete, _zero):
            improved |= edit(lambda: best[0], consider)
    return best[1], best[2]


def _truncate(current: Callable[[], list[int]], consider: Callable[[list[int]], bool]) -> bool:
    """The shortest prefix that still fails (the rest of the choices read as 0, the simplest)."""
    improved = False
    lo, hi = 0, len(current())
    while lo < hi:
        mid = (lo + hi) // 2
        if consider(current()[:mid]):
            improved, hi = True, min(mid, len(current()))
        else:
            lo = mid + 1
    return improved


def _delete(current: Callable[[], list[int]], consider: Callable[[list[int]], bool]) -> bool:
    improved = False
    for k in (16, 8, 4, 2, 1):
        i = len(current()) - k
        while i >= 0:
            seq = current()
            if consider(seq[:i] + seq[i + k:]):
                improved = True
            i -= 1
    return improved


def _zero(current: Callable[[], list[int]], consider: Callable[[list[int]], bool]) -> bool:
    improved = False
    for k in (8, 4, 2, 1):
        i = len(current()) - k
        while i >= 0:
            seq = current()
            if any(seq[i:i + k]) and consider(seq[:i] + [0] * k + seq[i + k:]):
                improved = True
            i -= 1
    return improved


def _lower(current: Callable[[], list[int]], consider: Callable[[list[int]], bool]) -> bool:
    """Each choice towards 0, first to last (the first ones pick the mesh, dims and statement count)."""
    improved = False
    i = 0
    while i < len(current()):
        seq = current()
        if seq[i] > 0:
            for value in (0, seq[i] // 2, seq[i] - 1):
                if value < seq[i] and consider(seq[:i] + [value] + seq[i + 1:]):
                    improved = True
                    break
        i += 1
    return improved
