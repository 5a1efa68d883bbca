"""Halo arithmetic shared by the rewriter (which imports no JAX) and the runtime: which rows of its
neighbours' blocks a device needs when a split dim is cut into equal blocks again."""

from __future__ import annotations

__all__ = ["reblock_halos"]


def reblock_halos(rows: int, shards: int, start: int, out_rows: int, span: int | None = None) -> tuple[int, int]:
    """The rows a block needs from its previous and next neighbour when the dim's global rows
    ``[start, start + out_rows)`` (beyond ``[0, rows * shards)``: padding) are split into ``shards``
    blocks again: ``(before, after)``, each at most ``rows`` for a neighbour exchange.  With ``span``,
    block ``i`` takes the ``span`` rows from ``start + i * out_rows / shards`` instead (the windows of a
    convolution's output block, overlapping their neighbours')."""
    total, block = rows * shards, out_rows // shards
    span = block if span is None else span
    before = after = 0
    for i in range(shards):
        lo, hi = max(start + i * block, 0), min(start + i * block + span, total)
        if lo < hi:
            before = max(before, i * rows - lo)
            after = max(after, hi - (i + 1) * rows)
    return before, after
