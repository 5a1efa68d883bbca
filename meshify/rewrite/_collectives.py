"""Every collective meshify emits, described once.

A :class:`Collective` owns all that the passes need to know of one kind: its layout
effect (for planner steps), the code it emits, the reason text of its ``# meshify:``
comment, the HLO instruction it compiles to, how many of them, and the bytes each
returns per device.  The planner, the emitter, the interpreter's comments, ``explain``
and ``verify`` read these entries and nothing else, so a new kind of collective is one
entry here (plus its runtime function, if it needs one).

Two sorts of kind: *steps* convert one value between two layouts of the same dims
(``psum``, ``psum_scatter``, ``all_gather``, ``all_to_all`` and the free local ``slice``;
:mod:`_plan` chooses them); *rule collectives* run inside a replacement an op rule emits
(``pmax`` for a max over a split dim, the two all-reduces of a sharded softmax).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from meshify.annotate._types import Layout

__all__ = ["Collective", "COLLECTIVES", "STEP_KINDS", "axes_text", "collective", "halo_kind", "sections_kind"]


def axes_text(axes) -> str:
    """Mesh axes as comments name them: 'data' x 'model'."""
    return " x ".join(f"'{a}'" for a in axes)


@dataclass(frozen=True, slots=True)
class Collective:
    """One kind of collective (or local slice).

    Attributes:
        kind: its name in plans, comments and ``explain`` (``psum``).
        hlo: the HLO instruction it compiles to (``all-reduce``); None for local work.
        instructions: HLO instructions per emission (a sharded softmax runs 2 all-reduces).
        template: for steps, the code wrapped around the value ``{x}`` (placeholders ``{mr}``,
            ``{axes}``, ``{dim}``, ``{to_dim}``); None for rule collectives.
        result_bytes: ``(local bytes of the operand, shards) -> bytes`` the instruction returns
            per device, the measure :mod:`meshify.runtime.hlo` counts.
        effect: ``(layout, axes, dim, to_dim) -> layout`` after a step.
        reason: ``(what, axes, dim, to, purpose, origin) -> text`` of a step's comment.
        wire: ``dtype of the operand -> dtype the instructions move`` where the code says the operand's
            (a comparison's bool, an integer's, an ``astype``'s; see ``Dtypes.concrete``); None: the
            function's float dtype.  Most move the operand's own; a tuple gives each instruction's (argmax
            reduces a key as wide as the operand, then an int32 index).
        exact_instructions: instructions per emission on an integer or bool operand, where fewer (a
            ``pmax`` carries a NaN flag for floats only).
    """

    kind: str
    hlo: str | None
    instructions: int = 1
    template: str | None = None
    result_bytes: Callable[[int, int], int] = lambda local, shards: local
    effect: Callable[..., Layout] | None = None
    reason: Callable[..., str] | None = None
    wire: Callable[[str | None], str | None | tuple[str | None, ...]] = lambda dtype: dtype
    exact_instructions: int | None = None
    #: What each instruction computes, where kinds share one (softmax's and logsumexp's max and sum of
    #: exp, jnp.max's max): ``explain`` counts each once per value, as XLA does; () for its own.
    parts: tuple[str, ...] = ()
    #: Its statistic runs without the reduced dim, though its record's layout keeps it (size 1): the
    #: softmax family's max and sum are the same collectives as ``jnp.max(x, axis)``'s, not ``keepdims``'.
    squeezed: bool = False

    def moves(self, dtype: str | None) -> tuple[str | None, ...]:
        """The dtype each of its instructions moves for an operand of ``dtype`` (None: the float inputs'),
        one entry per instruction it runs."""
        exact = dtype is not None and not dtype.startswith(("float", "bfloat", "complex"))
        count = self.exact_instructions if exact and self.exact_instructions is not None else self.instructions
        wire = self.wire(dtype)
        return wire[:count] if isinstance(wire, tuple) else (wire,) * count

    @property
    def communicates(self) -> bool:
        return self.hlo is not None


def _with_axes(layout: Layout, axes: list, partial: set) -> Layout:
    return Layout(layout.dims, tuple(axes), frozenset(partial))


def _psum_effect(layout: Layout, axes, dim: int, to_dim: int) -> Layout:
    return _with_axes(layout, list(layout.axes), set(layout.partial) - set(axes))


def _psum_scatter_effect(layout: Layout, axes, dim: int, to_dim: int) -> Layout:
    new = list(layout.axes)
    new[dim] = new[dim] + tuple(axes)
    return _with_axes(layout, new, set(layout.partial) - set(axes))


def _all_gather_effect(layout: Layout, axes, dim: int, to_dim: int) -> Layout:
    new = list(layout.axes)
    new[dim] = new[dim][: len(new[dim]) - len(axes)]
    return _with_axes(layout, new, set(layout.partial))


def _slice_effect(layout: Layout, axes, dim: int, to_dim: int) -> Layout:
    new = list(layout.axes)
    new[dim] = new[dim] + tuple(axes)
    return _with_axes(layout, new, set(layout.partial))


def _all_to_all_effect(layout: Layout, axes, dim: int, to_dim: int) -> Layout:
    new = list(layout.axes)
    new[dim] = new[dim][:-1]
    new[to_dim] = new[to_dim] + tuple(axes)
    return _with_axes(layout, new, set(layout.partial))


_STEPS = [
    Collective(
        "psum", "all-reduce", template="{mr}.psum({x}, {axes})", effect=_psum_effect,
        reason=lambda what, axes, dim, to, purpose, origin:
            f"psum over {axes_text(axes)}: {what} is a partial sum{origin}; {purpose} needs it whole"),
    Collective(
        "psum_scatter", "reduce-scatter", template="{mr}.psum_scatter({x}, {axes}, scatter_dimension={dim})",
        result_bytes=lambda local, shards: local // shards, effect=_psum_scatter_effect,
        reason=lambda what, axes, dim, to, purpose, origin:
            f"psum_scatter over {axes_text(axes)}: {what} is a partial sum{origin}; {purpose} wants dim "
            f"'{dim}' split, so reduce and split in one step"),
    Collective(
        "all_gather", "all-gather", template="{mr}.all_gather({x}, {axes}, axis={dim})",
        result_bytes=lambda local, shards: local * shards, effect=_all_gather_effect,
        reason=lambda what, axes, dim, to, purpose, origin:
            f"all_gather over {axes_text(axes)}: {purpose} needs dim '{dim}' of {what} whole"),
    Collective(
        "slice", None, template="{mr}.local_block({x}, axis={dim}, axis_name={axes})", effect=_slice_effect,
        reason=lambda what, axes, dim, to, purpose, origin:
            f"local slice over {axes_text(axes)} (no communication): {purpose} wants dim '{dim}' of {what} split"),
    Collective(
        "all_to_all", "all-to-all",
        template="jax.lax.all_to_all({x}, {axes}, split_axis={to_dim}, concat_axis={dim}, tiled=True)",
        effect=_all_to_all_effect,
        reason=lambda what, axes, dim, to, purpose, origin:
            f"all_to_all over {axes_text(axes)}: {purpose} wants {what} split along '{to}' instead of '{dim}'"),
]

def _promoted_integer(dtype: str | None) -> str | None:
    """What ``jnp.prod``/``jnp.sum`` make of an integer or bool operand: at least 32 bits."""
    if dtype == "bool" or dtype in ("int8", "int16"):
        return "int32"
    return "uint32" if dtype in ("uint8", "uint16") else dtype


def _arg_key(dtype: str | None) -> tuple[str | None, str]:
    """argmax/argmin all-reduce an integer key as wide as the operand (bool: int32; an integer is its own
    key; None: the float inputs' size) and then an int32 index (runtime/_statistics.py ``_arg``)."""
    if dtype is None or dtype == "bool":
        return ("int32" if dtype else None), "int32"
    floats = {"float16": "int16", "bfloat16": "int16", "float32": "int32", "float64": "int64"}
    return floats.get(dtype, dtype), "int32"


_RULE_COLLECTIVES = [
    # The max (min) and whether any device saw a NaN (an all-reduce max drops NaNs; jnp.max keeps them);
    # an integer max has no NaN to carry.
    Collective("pmax", "all-reduce", instructions=2, exact_instructions=1, parts=("max", "max_nan")),
    Collective("pmin", "all-reduce", instructions=2, exact_instructions=1, parts=("min", "min_nan")),
    # local max, pmax, local sum of exp, psum: two all-reduces of the statistic.
    Collective("softmax", "all-reduce", instructions=2, parts=("max", "sum_exp"), squeezed=True),
    Collective("log_softmax", "all-reduce", instructions=2, parts=("max", "sum_exp"), squeezed=True),
    Collective("logsumexp", "all-reduce", instructions=2, parts=("max", "sum_exp"), squeezed=True),
    # Statistics over split dims (rules/statistics.py, runtime/_statistics.py).
    # var/std: psum of the local sums (the global mean), psum of the squared deviations.
    Collective("var", "all-reduce", instructions=2, parts=("mean", "squared_deviations")),
    Collective("std", "all-reduce", instructions=2, parts=("mean", "squared_deviations")),
    # var/std(where=...): first the global count of the mask (a third all-reduce).
    Collective("masked_var", "all-reduce", instructions=3, parts=("count", "mean", "squared_deviations")),
    # nansum: one psum of the local sums of the non-NaN entries (float16/bfloat16 in float32, integers promoted
    # as jnp.sum does); nanmean: that and the global count of them, in the same dtype; nanvar/nanstd: the
    # count, the mean and the squared deviations (masked_var's three); nanmax/nanmin: mr.max's two of the
    # NaN-filled values and whether any device saw a non-NaN entry (int32); an integer's max alone.
    Collective("nansum", "all-reduce", wire=lambda dtype: "float32" if dtype in ("float16", "bfloat16")
               else _promoted_integer(dtype)),
    Collective("nanmean", "all-reduce", instructions=2, parts=("sum", "count"),
               wire=lambda dtype: "float32" if dtype in ("float16", "bfloat16") else dtype),
    # (nanmax and nanmin of one value share the flag, as XLA computes it once)
    Collective("nanmax", "all-reduce", instructions=3, exact_instructions=1, wire=lambda dtype: (dtype, dtype, "int32"),
               parts=("nan_filled_max", "nan_filled_max_nan", "non_nan_seen")),
    Collective("nanmin", "all-reduce", instructions=3, exact_instructions=1, wire=lambda dtype: (dtype, dtype, "int32"),
               parts=("nan_filled_min", "nan_filled_min_nan", "non_nan_seen")),
    # argmax/argmin: pmax (pmin) of the ordered key, pmin of the first global index holding it.
    Collective("argmax", "all-reduce", instructions=2, wire=_arg_key),
    Collective("argmin", "all-reduce", instructions=2, wire=_arg_key),
    # any/all: one all-reduce max (min) of the local flags, as int32.
    Collective("any", "all-reduce", wire=lambda dtype: "int32"),
    Collective("all", "all-reduce", wire=lambda dtype: "int32"),
    # prod: an all-gather of the local products (integers promoted as jnp.prod does); cumsum/cumprod:
    # of each shard's total (jnp.cumsum keeps an integer's dtype and makes a bool's int32).
    Collective("prod", "all-gather", result_bytes=lambda local, shards: local * shards, wire=_promoted_integer),
    # top_k along a split dim: an all-gather of each device's top k values, one of their int32 indices
    # (two records: the indices' is dropped where only the values are read).
    Collective("top_k", "all-gather", result_bytes=lambda local, shards: local * shards),
    Collective("top_k_indices", "all-gather", result_bytes=lambda local, shards: local * shards,
               wire=lambda dtype: "int32"),
    Collective("cumsum", "all-gather", result_bytes=lambda local, shards: local * shards,
               wire=lambda dtype: "int32" if dtype == "bool" else dtype),
    Collective("cumprod", "all-gather", result_bytes=lambda local, shards: local * shards,
               wire=lambda dtype: "int32" if dtype == "bool" else dtype),
    # jax.lax.associative_scan with any combine along a split dim: an all-gather of each leaf's block totals.
    Collective("scan_totals", "all-gather", result_bytes=lambda local, shards: local * shards),
    # jax.lax's cumulative max, min and logsumexp along a split dim: an all-gather of the shard totals.
    *(Collective(kind, "all-gather", result_bytes=lambda local, shards: local * shards)
      for kind in ("cummax", "cummin", "cumlogsumexp")),
    # A psum in float32 of float16/bfloat16 sums, cast back after it (a vector norm's sum of squares, a masked
    # mean's sum and count): rounded once, as one device's jnp.sum.
    Collective("wide_psum", "all-reduce", wire=lambda dtype: "float32" if dtype in ("float16", "bfloat16") else dtype),
    # Halo exchange (rules/convolution.py, runtime/_spatial.py): one collective-permute per side of a
    # split spatial dim (and per corner of two), on a one-row slab of the value (see halo_kind).
    Collective("halo", "collective-permute"),
]

#: Every kind, by name.
COLLECTIVES: dict[str, Collective] = {c.kind: c for c in (*_STEPS, *_RULE_COLLECTIVES)}
#: The kinds the layout planner chooses between.
STEP_KINDS = tuple(c.kind for c in _STEPS)

_PLACEHOLDERS = {"x", "mr", "axes", "dim", "to_dim"}


def _check() -> None:
    """Templates name only known placeholders; steps have an effect and a reason (at import, not at
    rewrite time)."""
    for c in COLLECTIVES.values():
        if c.template is not None:
            unknown = set(re.findall(r"\{(\w+)\}", c.template)) - _PLACEHOLDERS
            assert not unknown and "{x}" in c.template, (c.kind, unknown)
            assert c.effect is not None and c.reason is not None, c.kind


_check()


def halo_kind(rows: int) -> str:
    """The kind of a halo of ``rows`` rows (cells, for a corner) per device: one collective-permute whose
    result is ``rows`` times the one-row slab its record's layout describes (the split spatial dim
    sized 1).  ``"halo"`` for one row; ``"halo_<rows>"`` described here on first use."""
    if rows == 1:
        return "halo"
    kind = f"halo_{rows}"
    if kind not in COLLECTIVES:
        COLLECTIVES[kind] = Collective(kind, "collective-permute", result_bytes=lambda local, shards: local * rows)
    return kind


def sections_kind(chunks: int, sections: int) -> str:
    """The kind of one ppermute of ``jnp.split`` into ``sections`` along a split dim
    (``mr.split_sections``) moving ``chunks`` of the ``sections`` chunks of each device's block: its result is
    that fraction of the block its record's layout describes."""
    kind = f"sections_{chunks}_of_{sections}"
    if kind not in COLLECTIVES:
        COLLECTIVES[kind] = Collective(kind, "collective-permute",
                                       result_bytes=lambda local, shards: local * chunks // sections)
    return kind


def collective(kind: str) -> Collective:
    """The descriptor of ``kind`` (a KeyError names an undescribed kind: add it above)."""
    return COLLECTIVES[kind]
