"""Which names a loop body carries from one iteration to the next.

A Python loop's body is rewritten once, so every array it carries must enter each iteration in
the same layout.  A name the body assigns before it reads it is not carried: each iteration
starts it afresh (T5's ``h = rms_norm(x, ...)`` in the encoder loop, then again over the
decoder's length in the decoder loop).  The answer errs on the side of "carried": any name
inside a compound statement (an ``if``, a nested ``def``, a loop) counts as read there.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

__all__ = ["rebound_first"]


class _Names(cst.CSTVisitor):
    """Every identifier under a node (an attribute's name too: an over-approximation of reads)."""

    def __init__(self) -> None:
        self.found: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.found.add(node.value)


def _names(node: cst.CSTNode) -> set[str]:
    visitor = _Names()
    node.visit(visitor)
    return visitor.found


def _assigned(small: cst.BaseSmallStatement) -> tuple[set[str], cst.CSTNode | None]:
    """The plain names ``small`` binds and the expression it reads first (``x = f(x)`` reads, then binds)."""
    if isinstance(small, cst.Assign) and all(isinstance(t.target, cst.Name) for t in small.targets):
        return {t.target.value for t in small.targets}, small.value  # type: ignore[attr-defined]
    if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
        return {small.target.value}, small.value
    return set(), small


def rebound_first(statements: Sequence[cst.BaseStatement]) -> frozenset[str]:
    """The names ``statements`` (a loop body, in order) bind before reading them."""
    read: set[str] = set()
    rebound: set[str] = set()
    for stmt in statements:
        if not isinstance(stmt, cst.SimpleStatementLine):
            read |= _names(stmt)
            continue
        for small in stmt.body:
            bound, reads = _assigned(small)
            read |= _names(reads) if reads is not None else set()
            rebound |= bound - read
    return frozenset(rebound)
