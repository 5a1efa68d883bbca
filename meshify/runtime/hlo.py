"""Collectives in compiled HLO text: what a program really sends, counted and sized.

Use it on ``fn.lower(*args).compile().as_text()``.  Each collective instruction
(``all-reduce``, ``all-gather``, ``reduce-scatter``, ``all-to-all``,
``collective-permute``, or their async ``-start`` forms) becomes one
:class:`Collective`; the ``-done`` halves of async pairs are not counted again.
Sizes come from the result shape printed between ``=`` and the op name, per device;
a tuple result (XLA's combiners merge several collectives into one) is summed.  An
async ``-start`` may print its operands inside that tuple too (GPU's
``all-gather-start``, ``collective-permute-start``), so its bytes are an upper bound.
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

# `[ROOT] %name = <shape> <kind>[-start](`; the shape may be a tuple holding spaces.
_INSTRUCTION = re.compile(
    r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(?P<shape>[^=]+?)\s+"
    r"(?P<kind>" + "|".join(KINDS) + r")(?:-start)?\(")
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
    for match in _ARRAY.finditer(shape_text):
        dims = [d.strip().lstrip("<=") for d in match["dims"].split(",") if d.strip()]
        count = math.prod(int(d) for d in dims)
        total += -(-count * _element_bits(match["dtype"]) // 8)
    return total


def collectives(hlo_text: str) -> list[Collective]:
    """Every collective instruction in ``hlo_text``, in order of appearance."""
    found = []
    for line in hlo_text.splitlines():
        match = _INSTRUCTION.match(line)
        if match is None:
            continue
        shape = _LAYOUT.sub("", match["shape"])
        found.append(Collective(match["kind"], shape, shape_bytes(shape)))
    return found


def summarize(found: Iterable[Collective]) -> dict[str, tuple[int, int]]:
    """kind -> (count, total bytes), kinds in order of first appearance."""
    summary: dict[str, tuple[int, int]] = {}
    for c in found:
        count, size = summary.get(c.kind, (0, 0))
        summary[c.kind] = (count + 1, size + c.bytes)
    return summary
