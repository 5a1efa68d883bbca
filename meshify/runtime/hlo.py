"""Collectives in compiled HLO text: what a program really sends, counted and sized.

Use it on ``fn.lower(*args).compile().as_text()``.  Each collective instruction
(``all-reduce``, ``all-gather``, ``reduce-scatter``, ``all-to-all``,
``collective-permute``, or their async ``-start`` forms) becomes one
:class:`Collective`; the ``-done`` halves of async pairs are not counted again.
Sizes come from the result shape printed between ``=`` and the op name, per device;
a tuple result (XLA's combiners merge several collectives into one) is summed.

The shape is read as HLO prints it, not with a pattern that stops at some character:
``/*index=5*/`` comments (XLA numbers tuple elements from the sixth on), nested tuples,
dynamic dims (``f32[<=8]``) and layouts with parentheses (``{0:T(256)}``) all occur.
An ``all-gather-start`` or ``collective-permute-start`` returns a tuple of (operands,
results[, context scalars]); its bytes are those of the results alone.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["KINDS", "Collective", "collectives", "shape_bytes", "summarize"]

KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")

# Bits per element of each HLO primitive type.
_BITS = {
    "pred": 8, "s2": 2, "u2": 2, "s4": 4, "u4": 4, "s8": 8, "u8": 8, "s16": 16, "u16": 16,
    "s32": 32, "u32": 32, "s64": 64, "u64": 64, "f16": 16, "bf16": 16, "f32": 32, "f64": 64,
    "c64": 64, "c128": 128, "token": 0,
}

#: Async starts whose result tuple holds the operands first, then the results.
_OPERANDS_FIRST = ("all-gather", "collective-permute")

# `[ROOT] %name = `; the shape and the opcode follow (read by `_split_shape`).
_ASSIGNMENT = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*")
_OPCODE = re.compile(r"\s+(?P<op>[\w\-]+)\(")
_COMMENT = re.compile(r"/\*.*?\*/")
_ARRAY = re.compile(r"(?P<dtype>[a-z][a-z0-9]*)\[(?P<dims>[^\]]*)\]")
_LAYOUT = re.compile(r"\{[^{}]*\}")


@dataclass(frozen=True, slots=True)
class Collective:
    """One collective instruction: its kind, result shape (layouts dropped) and result bytes."""

    kind: str
    shape_text: str
    bytes: int


def _element_bits(dtype: str) -> int:
    if dtype in _BITS:
        return _BITS[dtype]
    if dtype.startswith("f8") or dtype.startswith("f4") or dtype.startswith("f6"):
        return int(dtype[1])
    raise ValueError(f"unknown HLO element type {dtype!r}")


def shape_bytes(shape_text: str) -> int:
    """Bytes of an HLO shape: ``f32[2,8,16]`` -> 1024; tuple elements are summed.

    Dynamic dims (``<=8``) count at their bound; sub-byte types round up per array.
    """
    total = 0
    for match in _ARRAY.finditer(_COMMENT.sub("", shape_text)):
        dims = [d.strip().lstrip("<=") for d in match["dims"].split(",") if d.strip()]
        count = math.prod(int(d) for d in dims)
        total += -(-count * _element_bits(match["dtype"]) // 8)
    return total


def _shape_end(text: str) -> int:
    """Where the shape at the start of ``text`` ends: after its balanced ``(...)`` tuple, or
    after its array (``f32[8,2]{1,0}``, whose layout may hold parentheses)."""
    depth = 0
    for i, char in enumerate(text):
        if char in "({[":
            depth += 1
        elif char in ")}]":
            depth -= 1
        elif char.isspace() and depth == 0:
            return i
    return len(text)


def _tuple_items(shape: str) -> list[str]:
    """The top-level elements of a tuple shape ``(a, (b, c), d)``; ``[shape]`` if not a tuple."""
    if not shape.startswith("("):
        return [shape]
    items, depth, start = [], 0, 1
    for i, char in enumerate(shape[:-1]):
        if char in "({[":
            depth += 1
        elif char in ")}]":
            depth -= 1
        elif char == "," and depth == 1:
            items.append(shape[start:i].strip())
            start = i + 1
    items.append(shape[start:-1].strip())
    return [item for item in items if item]


def _parse(line: str) -> Collective | None:
    """The collective ``line`` defines, or None (another instruction, a ``-done``, not an instruction)."""
    head = _ASSIGNMENT.match(line)
    if head is None:
        return None
    rest = _COMMENT.sub("", line[head.end():])
    end = _shape_end(rest)
    opcode = _OPCODE.match(rest, end)
    if opcode is None:
        return None
    kind, start = opcode["op"].removesuffix("-start"), opcode["op"].endswith("-start")
    if kind not in KINDS:
        return None
    shape = _LAYOUT.sub("", rest[:end])
    items = _tuple_items(shape)
    sized = items[1] if start and kind in _OPERANDS_FIRST and len(items) >= 2 else shape
    return Collective(kind, shape, shape_bytes(sized))


def collectives(hlo_text: str) -> list[Collective]:
    """Every collective instruction in ``hlo_text``, in order of appearance."""
    return [c for c in map(_parse, hlo_text.splitlines()) if c is not None]


def summarize(found: Iterable[Collective]) -> dict[str, tuple[int, int]]:
    """kind -> (count, total bytes), kinds in order of first appearance."""
    summary: dict[str, tuple[int, int]] = {}
    for c in found:
        count, size = summary.get(c.kind, (0, 0))
        summary[c.kind] = (count + 1, size + c.bytes)
    return summary
