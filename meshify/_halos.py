"""Halo arithmetic shared by the rewriter (which imports no JAX) and the runtime: which rows of its
neighbours' blocks a device needs when a split dim is cut into equal blocks again."""

from __future__ import annotations

import functools
import itertools
import math

__all__ = ["concat_shifts", "reblock_halos", "section_chunks", "section_groups", "section_rounds", "section_widths"]


def reblock_halos(rows: int, shards: int, start: int, out_rows: int, span: int | None = None,
                  image: tuple[int, int] | None = None) -> tuple[int, int]:
    """The rows a block needs from its previous and next neighbour when the dim's global rows
    ``[start, start + out_rows)`` (beyond ``[0, rows * shards)``: padding) are split into ``shards``
    blocks again: ``(before, after)``, each at most ``rows`` for a neighbour exchange.  With ``span``,
    block ``i`` takes the ``span`` rows from ``start + i * out_rows / shards`` instead (the windows of a
    convolution's output block, overlapping their neighbours').  With ``image``, only the rows
    ``[image[0], image[1])`` are read (a slice padded back: the rows beyond it are padding too)."""
    total, block = rows * shards, out_rows // shards
    span = block if span is None else span
    first, end = image if image is not None else (0, total)
    before = after = 0
    for i in range(shards):
        lo, hi = max(start + i * block, first), min(start + i * block + span, end)
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


@functools.cache
def section_rounds(sections: int | tuple[int, ...], shards: int
                   ) -> tuple[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]], ...]:
    """How ``jnp.split`` along a dim cut into ``shards`` blocks moves the rows, so that each device holds its
    block of every section.  ``sections``: how many equal sections, or each section's block in chunks (a
    chunk: the rows all the blocks are whole numbers of).  Cut the dim into chunks: device ``j`` holds
    chunks ``j * m + l`` (``m`` chunks a block); each section's chunks fall in ``shards`` blocks in turn.
    Every device sends ``m`` chunks and receives ``m`` (its block of each section, in order): the moves, a
    regular bipartite graph, fall into ``m`` rounds in which each device sends one chunk and receives one (a
    ppermute; one whose every chunk stays where it is moves nothing).  Each round: ``(send, to, slot)``,
    indexed by block: the local chunk device ``j`` sends, the device it goes to, and where in its block of
    the sections the chunk device ``i`` receives goes."""
    sizes = (1,) * sections if isinstance(sections, int) else sections
    m = sum(sizes)
    starts = [sum(sizes[:t]) for t in range(len(sizes))]

    def target(k: int) -> tuple[int, int]:
        """Global chunk ``k``: (the device whose block of its section it is, its place there)."""
        for t, size in enumerate(sizes):
            first = starts[t] * shards
            if first <= k < first + size * shards:
                block, r = divmod(k - first, size)
                return block, starts[t] + r
        raise AssertionError(k)

    moves = {(j, l): target(j * m + l) for j in range(shards) for l in range(m)}
    edges = {j: list(range(m)) for j in range(shards)}  # chunks not yet sent, by sender
    rounds = []
    for _ in range(m):
        match: dict[int, tuple[int, int]] = {}  # receiver -> (sender, local chunk)
        owner: dict[int, int] = {}  # sender -> receiver
        for j in range(shards):  # chunks that stay first: a round of only those is no collective
            for l in edges[j]:
                if moves[j, l][0] == j and j not in match:
                    match[j], owner[j] = (j, l), j
                    break
        for j in range(shards):
            if j not in owner:
                _augment(j, edges, moves, match, owner, set())
        send, to, slot = [0] * shards, [0] * shards, [0] * shards
        for i, (j, l) in match.items():
            send[j], to[j], slot[i] = l, i, moves[j, l][1]
            edges[j].remove(l)
        rounds.append((tuple(send), tuple(to), tuple(slot)))
    return tuple(rounds)


def _augment(j: int, edges: dict[int, list[int]], moves: dict, match: dict, owner: dict, seen: set[int]) -> bool:
    """Kuhn's augmenting path from sender ``j`` (a regular bipartite graph always has a perfect matching)."""
    for l in edges[j]:
        i = moves[j, l][0]
        if i in seen:
            continue
        seen.add(i)
        if i not in match or _augment(match[i][0], edges, moves, match, owner, seen):
            match[i], owner[j] = (j, l), i
            return True
    return False


def section_widths(sections: int | tuple[int, ...] | list[int], total: int, uneven: bool = False) -> list[int] | None:
    """Each section's rows, as ``jnp.split(x, sections)`` cuts ``total`` rows: ``n`` equal ones (None where
    ``n`` does not divide ``total``; ``uneven``: as ``jnp.array_split`` cuts them, the first ``total % n`` one
    row longer), or between the indices, taken as written (no wrapping: a negative size is JAX's error)."""
    if isinstance(sections, int):
        if uneven:
            return [total // sections + (i < total % sections) for i in range(sections)]
        return [total // sections] * sections if total % sections == 0 else None
    return [b - a for a, b in itertools.pairwise([0, *sections, total])]


def section_chunks(widths: list[int], shards: int) -> tuple[int, tuple[int, ...]]:
    """The rows of one chunk (every section's block a whole number of them) and each section's block in
    chunks: the units :func:`section_rounds` moves.  Each width must split into ``shards`` blocks."""
    chunk = math.gcd(*(w // shards for w in widths)) or 1
    return chunk, tuple(w // shards // chunk for w in widths)


def section_groups(sizes: tuple[int, ...], shards: int) -> dict[tuple[int, ...], list[tuple[tuple[int, ...], ...]]]:
    """:func:`section_rounds` grouped by the way their chunks move (``to``): rounds moving alike are one
    ppermute.  Each group: its rounds' ``(send, slot)``; a group whose ``to`` keeps every chunk moves nothing."""
    groups: dict[tuple[int, ...], list] = {}
    for send, to, slot in section_rounds(sizes, shards):
        groups.setdefault(to, []).append((send, slot))
    return groups
