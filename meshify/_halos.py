"""Halo arithmetic shared by the rewriter (which imports no JAX) and the runtime: which rows of its
neighbours' blocks a device needs when a split dim is cut into equal blocks again."""

from __future__ import annotations

__all__ = ["concat_shifts", "reblock_halos"]


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


def concat_shifts(rows: int, shards: int, offset: int, block: int) -> dict[int, tuple[int, ...]]:
    """For one input of a concatenation along a split dim (``rows`` rows in each of ``shards`` blocks, at
    row ``offset`` of the result, which is cut into blocks of ``block`` rows): shift ``d`` -> the result
    blocks ``p`` that need some of the input's block ``p + d`` (``d`` 0: their own)."""
    out: dict[int, list[int]] = {}
    total = rows * shards
    for p in range(shards):
        lo, hi = max(p * block - offset, 0), min((p + 1) * block - offset, total)
        if lo < hi:
            for q in range(lo // rows, (hi - 1) // rows + 1):
                out.setdefault(q - p, []).append(p)
    return {d: tuple(ps) for d, ps in sorted(out.items())}
