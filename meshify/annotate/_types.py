"""Frozen value types shared by every layer: mesh shapes, layout rules, layouts.

They validate themselves on construction, so a value that exists is a valid one,
and their reprs are evaluable Python.
"""

from __future__ import annotations

import contextlib
import math
import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from meshify.errors import AnnotationError, RulesError

__all__ = ["MeshSpec", "Rules", "Layout", "BROADCAST", "INFERRED", "Axes", "unify_dims"]

Axes = tuple[str, ...]

#: The name of a dim of size 1 that broadcasts against anything (a ``keepdims`` result).
BROADCAST = "1"
#: The mark ending a dim name meshify chose itself (the new dims of a reshape inside an expression,
#: named from its size expressions: ``heads?``).  Such a dim lines up with any name in a contraction
#: or a broadcast (the user's name wins); JAX still checks the sizes when the function is traced.
INFERRED = "?"


def literal_size(dim: str) -> int | None:
    """The size an inferred dim's name says (``2?``: top_k's 2 entries), else None."""
    if dim.endswith(INFERRED) and dim[:-1].isdigit():
        return int(dim[:-1])
    return None


_SLICED = re.compile(r"(?P<base>.+)\[(?P<lo>-?(?:\d*|[A-Za-z_]\w*)):(?P<hi>-?(?:\d*|[A-Za-z_]\w*))"
                     r"(?::(?P<step>-?\d+))?\]\?")


def sliced_dim(dim: str, lower: int | str | None, upper: int | str | None, step: int | None) -> str:
    """The inferred name of ``dim`` sliced by literal bounds: ``seq[1:]?`` for ``tokens[:, 1:]``,
    ``head_dim[::2]?`` for ``x[..., ::2]`` (its size follows from the dim's: :func:`slice_size`); a bound
    may be a name of a Python int (``head_dim[:half]?`` for ``x[..., :half]``: sized by no one, but joined
    with ``x[..., half:]`` back to ``head_dim``, :func:`joined_slices`)."""
    # (a slice of a slice spells both: seq[1:][::2]?; of another inferred dim keeps its mark: head_dim?[::2]?, which
    # never joins back to the user's head_dim)
    base = dim[:-1] if dim.endswith(INFERRED) and _SLICED.fullmatch(dim) else dim
    parts = f"{'' if lower is None else lower}:{'' if upper is None else upper}"
    return f"{base}[{parts}{'' if step is None else f':{step}'}]{INFERRED}"


def slice_size(dim: str, sizes: Mapping[str, int]) -> int | None:
    """The size of a dim :func:`sliced_dim` named, given the sizes of dims (None: its base has none)."""
    match = _SLICED.fullmatch(dim)
    if match is None:
        return None
    base = match["base"]
    n = sizes.get(base)
    if n is None and base.endswith("]"):
        n = slice_size(base + INFERRED, sizes)
    if n is None:
        return None
    if not all(v is None or v.lstrip("-").isdigit() or v == "" for v in (match["lo"], match["hi"])):
        return None  # a bound named by a Python int (x[..., :half])
    bound = [int(v) if v not in (None, "") else None for v in (match["lo"], match["hi"], match["step"])]
    return len(range(n)[slice(*bound)])


def unsliced(dim: str) -> str:
    """``dim`` without its inferred mark and the slices :func:`sliced_dim` spelled in it (``seq[1:][::2]?``:
    ``seq``): the plain name of a dim derived from it with another size (a concatenate's ``seq?``)."""
    while (match := _SLICED.fullmatch(dim)) is not None:
        dim = match["base"] + INFERRED
    return dim.rstrip(INFERRED)


def joined_slices(dims: Sequence[str]) -> str | None:
    """The dim that slices named by :func:`sliced_dim`, joined end to end, are as long as: ``head_dim`` for
    ``head_dim[::2]?`` and ``head_dim[1::2]?`` (a rotary embedding's even and odd entries joined again), or
    ``seq[:4]?`` and ``seq[4:]?``, in any order; None where their lengths need not add up to the dim's.  Their
    bounds are literals, so the lengths are checked for every size of the dim up to past where they repeat."""
    matches = [_SLICED.fullmatch(d) for d in dims]
    if len(dims) < 2 or None in matches or len({m["base"] for m in matches}) != 1:  # type: ignore[index]
        return None
    written = [(m["lo"], m["hi"], m["step"]) for m in matches]  # type: ignore[index]
    names = sorted({v.lstrip("-") for bound in written for v in bound if v and not v.lstrip("-").isdigit()})
    if len(names) > 1:
        return None
    # a named bound (x[..., :half] and x[..., half:]) must join up for every value it may take
    for value in range(-8, 9) if names else [0]:
        bounds = [tuple(None if v in (None, "") else int(v) if v.lstrip("-").isdigit() else
                        (-value if v.startswith("-") else value) for v in bound) for bound in written]
        reach = sum(abs(b) for bound in bounds for b in bound if b is not None)
        steps = [abs(step or 1) for *_, step in bounds]
        if 0 in steps or reach + 2 * math.lcm(*steps) > 4096:
            return None
        if any(sum(len(range(n)[slice(*b)]) for b in bounds) != n
               for n in range(reach + 2 * math.lcm(*steps) + 1)):
            return None
    base = matches[0]["base"]  # type: ignore[index]
    return base + INFERRED if _SLICED.fullmatch(base + INFERRED) else base  # (seq[1:][::2]?: seq[1:]?)


def renamed_dims(before: tuple[str, ...], after: tuple[str, ...]) -> bool:
    """Whether ``after`` only names inferred dims of ``before`` (a loop body lining a carry's ``seq?`` up with
    a hinted ``seq``): each the same, or the name an inferred one took, with no name twice."""
    return before != after and len(before) == len(after) and len(set(after)) == len(after) and all(
        b == a or (b.endswith(INFERRED) and unify_dims(b, a) == a) for b, a in zip(before, after))


def hint_dims(dims: Iterable[str]) -> str:
    """Dims as a fix spells them in a hint (``'batch', 'seq'``): an inferred dim by a plain name (``seq[1:]?``
    and ``height_width?`` as ``'seq'`` and ``'height_width'``), which a hint may then give it."""
    out = []
    for d in dims:
        plain = re.sub(r"\[[^\]]*\]", "", d.rstrip(INFERRED)).rstrip(INFERRED) if d.endswith(INFERRED) else d
        out.append(repr(plain if plain.isidentifier() or plain == BROADCAST else "name"))
    return ", ".join(out)


def unify_dims(a: str, b: str) -> str | None:
    """The name two dims lined up with each other take: the same name, or the user's name over an
    inferred one (the first of two inferred ones); None when both are the user's and differ."""
    if a == b or b.endswith(INFERRED):
        return a
    if a.endswith(INFERRED):
        return b
    return None


@dataclass(frozen=True, slots=True)
class MeshSpec:
    """The shape of a device mesh: axis names and sizes, in order (major to minor)."""

    names: tuple[str, ...]
    sizes: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.names) != len(self.sizes):
            raise AnnotationError(f"mesh has {len(self.names)} axis names but {len(self.sizes)} sizes",
                                  fix="give every mesh axis one size")
        if not self.names:
            raise AnnotationError("a mesh needs at least one axis", fix="write e.g. @mesh(batch=8)")
        for name, size in zip(self.names, self.sizes):
            if not isinstance(name, str) or not name.isidentifier():
                raise AnnotationError(f"mesh axis name {name!r} is not an identifier",
                                      fix="name mesh axes like Python variables, e.g. batch=2, model=4")
            if isinstance(size, bool) or not isinstance(size, int):
                raise AnnotationError(f"mesh axis {name!r} has size {size!r}, not an int",
                                      fix=f"write {name}=<positive int>")
            if size < 1:
                raise AnnotationError(f"mesh axis {name!r} has size {size}; sizes must be at least 1",
                                      fix=f"give {name!r} a size of 1 or more")
        if len(set(self.names)) != len(self.names):
            raise AnnotationError(f"mesh axis names repeat: {self.names}", fix="give each mesh axis its own name")

    @classmethod
    def of(cls, **axes: int) -> MeshSpec:
        return cls(tuple(axes), tuple(axes.values()))

    def size(self, axes: Iterable[str] = ()) -> int:
        """The number of devices along ``axes`` (all axes if none given... see devices)."""
        out = 1
        for axis in axes:
            out *= self.sizes[self.names.index(axis)]
        return out

    @property
    def devices(self) -> int:
        out = 1
        for size in self.sizes:
            out *= size
        return out

    def order(self, axes: Iterable[str]) -> Axes:
        """``axes`` sorted in mesh order, for deterministic output."""
        return tuple(sorted(set(axes), key=self.names.index))

    def __contains__(self, axis: object) -> bool:
        return axis in self.names

    def __str__(self) -> str:
        return "x".join(str(s) for s in self.sizes) + " (" + ", ".join(
            f"{n}={s}" for n, s in zip(self.names, self.sizes)) + ")"

    def __repr__(self) -> str:
        return "MeshSpec.of(" + ", ".join(f"{n}={s}" for n, s in zip(self.names, self.sizes)) + ")"


class _Open(threading.local):
    #: The open :func:`consulted` sets of this thread, innermost last.
    sets: list[set[str]]

    def __init__(self) -> None:
        self.sets = []


_OPEN = _Open()


@contextlib.contextmanager
def consulted() -> Iterator[set[str]]:
    """A set that collects every dim whose rule :meth:`Rules.candidates` is asked for while the block
    runs (nested blocks each collect, the outer ones too)."""
    seen: set[str] = set()
    _OPEN.sets.append(seen)
    try:
        yield seen
    finally:
        _OPEN.sets.pop()  # (innermost: blocks nest)


def note_consulted(dims: Iterable[str]) -> None:
    """Notes ``dims`` in every open :func:`consulted` set, as if their rules were read now (what reusing
    a result computed from them reads)."""
    for seen in _OPEN.sets:
        seen.update(dims)


@dataclass(frozen=True, slots=True)
class Rules:
    """Layout rules: which mesh axes split each logical dim name, resolved per value in dim order.

    Each dim has candidates, tried in order (``{"d_model": ["data", None]}``): the first whose mesh
    axes no earlier dim of the same value took splits it; if none is free the dim stays whole (as
    logical-axis rules resolve in flax and t5x).  So ``{"batch": "data", "d_model": "data"}`` splits
    an activation ``[batch, d_model]`` over ``batch`` only and a weight ``[d_model, d_ff]`` over
    ``d_model``: fully sharded data parallelism.  A dim named exactly like a mesh axis goes to that
    axis unless a rule says otherwise; a rule mapping to ``()`` (``None`` in the user's dict) keeps a
    dim replicated.  Unmapped dims are replicated.
    """

    mesh: MeshSpec
    #: dim -> its candidates, each the mesh axes that would split it (``()``: whole).
    table: tuple[tuple[str, tuple[Axes, ...]], ...] = ()

    def __post_init__(self) -> None:
        for dim, candidates in self.table:
            for axes in candidates:
                for axis in axes:
                    if axis not in self.mesh:
                        raise RulesError(
                            f"rule {dim!r} -> {axis!r} names no mesh axis; the mesh has "
                            f"{', '.join(repr(n) for n in self.mesh.names)}",
                            fix=f"map {dim!r} to one of {list(self.mesh.names)} or add {axis!r} to @mesh(...)")
                if len(set(axes)) != len(axes):
                    raise RulesError(f"rule for {dim!r} repeats a mesh axis: {axes}",
                                     fix=f"list each axis once, e.g. rules={{{dim!r}: {tuple(dict.fromkeys(axes))!r}}}")

    @classmethod
    def parse(cls, mesh: MeshSpec, rules: object) -> Rules:
        """Builds rules from the user's dict, Mesh-TF string, or ``None``."""
        return cls(mesh, tuple(sorted(_rule_pairs(rules))))

    def candidates(self, dim: str) -> tuple[Axes, ...]:
        """The ways to split ``dim``, in order of preference (the last may be ``()``: whole), as the
        rules name them (size-1 axes included: see :meth:`layout`).  Every query is noted in each
        open :func:`consulted` set (what a rewrite read of the rules, so that plan can reuse it)."""
        for seen in _OPEN.sets:
            seen.add(dim)
        return self.unnoted(dim)

    def unnoted(self, dim: str) -> tuple[Axes, ...]:
        """:meth:`candidates`, noted nowhere (comparing two rules is no reading of them)."""
        for name, candidates in self.table:
            if name == dim:
                return candidates
        if dim in self.mesh:
            return ((dim,),)
        return ((),)

    def axes(self, dim: str) -> Axes:
        """The mesh axes that split dim ``dim`` when nothing else in its value takes them."""
        return self._sized(self.candidates(dim)[0])

    def layout(self, dims: tuple[str, ...]) -> Layout:
        """The layout these rules give a value with these dims: each dim, in order, takes its first
        candidate whose axes no earlier dim took (else it stays whole).

        A mesh axis of size 1 splits nothing: it takes part in the resolution as the rules name it (a
        dim that takes it leaves the next candidate to later dims), then is left out of the layout, so
        that a dim a rule maps to it (``@mesh(data=8, model=1, rules={"layer": "model"})``) is whole
        everywhere (a scan over it, a lookup, an index), no collective runs over it, and the generated
        code's specs and comments never name it."""
        taken: set[str] = set()
        axes = []
        for dim in dims:
            chosen = next((c for c in self.candidates(dim) if not taken & set(c)), ())
            taken |= set(chosen)
            axes.append(self._sized(chosen))
        return Layout(dims, tuple(axes))

    def _sized(self, axes: Axes) -> Axes:
        """``axes`` without those of size 1."""
        return tuple(a for a in axes if self.mesh.size((a,)) != 1)

    def __repr__(self) -> str:
        return f"Rules({self.mesh!r}, {self.as_dict()!r})"

    def as_dict(self) -> dict[str, object]:
        """The rules as a user writes them: ``{"d_ff": "model", "d_model": ["data", None]}``."""
        def one(axes: Axes) -> object:
            return None if not axes else axes[0] if len(axes) == 1 else axes

        return {dim: one(c[0]) if len(c) == 1 else [one(a) for a in c] for dim, c in self.table}


def _rule_pairs(rules: object) -> Iterator[tuple[str, tuple[Axes, ...]]]:
    if rules is None:
        return
    if isinstance(rules, str):
        yield from _parse_rule_string(rules)
        return
    if not isinstance(rules, Mapping):
        raise RulesError(f"rules={rules!r} is neither a dict nor a string",
                         fix='write rules={"d_ff": "model"} or rules="d_ff:model;heads:model"')
    for dim, target in rules.items():
        if not isinstance(dim, str) or not dim:
            raise RulesError(f"rules key {dim!r} is not a dim name", fix="keys are dim names (strings)")
        if dim.endswith(INFERRED):
            base = re.sub(r"\[.*\]$", "", dim.rstrip(INFERRED))
            raise RulesError(f"rules key {dim!r} names a dim meshify named itself (the mark '{INFERRED}'): rules "
                             "apply to the dims hints name", fix=f"write the rule for the dim it came from: "
                             f"rules={{{base!r}: None}}, or name the value with a hint first")
        if isinstance(target, list) or (isinstance(target, tuple) and None in target):
            # candidates, in order: ["data", None], ("data", None), ["model", ("data", "model")]
            yield dim, tuple(_one_rule(dim, t) for t in target) or ((),)
        else:
            yield dim, (_one_rule(dim, target),)


def _one_rule(dim: str, target: object) -> Axes:
    if target is None:
        return ()
    if isinstance(target, str):
        return (target,)
    if isinstance(target, tuple) and target and all(isinstance(t, str) for t in target):
        return tuple(target)
    raise RulesError(f"rule for {dim!r} maps to {target!r}; expected a mesh axis name, "
                     "a tuple of them (split over several axes), None, or a list of those (candidates in order)",
                     fix=f'write rules={{{dim!r}: "model"}} or rules={{{dim!r}: ["data", None]}}')


def _parse_rule_string(text: str) -> Iterator[tuple[str, tuple[Axes, ...]]]:
    """Mesh-TF's form: ``"d_ff:model;heads:model"``; pairs split by ``;``, ``,`` or spaces; several
    axes joined by ``+`` (``batch:data+model``); candidates by ``|`` (``d_model:data|none``)."""
    for pair in text.replace(";", " ").replace(",", " ").split():
        dim, sep, axes = pair.partition(":")
        if not sep or not dim or not axes:
            raise RulesError(f"rule {pair!r} in {text!r} is not of the form dim:axis",
                             fix='write rules="d_ff:model;heads:model"')
        yield dim, tuple(() if option.lower() == "none" else tuple(a for a in option.split("+") if a)
                         for option in axes.split("|"))


@dataclass(frozen=True, slots=True)
class Layout:
    """A value's dims, the mesh axes splitting each, and the axes it is a partial sum over.

    Invariants: one mesh axis splits at most one dim; a value is never both split and
    partial over the same axis.
    """

    dims: tuple[str, ...]
    axes: tuple[Axes, ...]
    partial: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if len(self.dims) != len(self.axes):
            raise ValueError(f"Layout: {len(self.dims)} dims but {len(self.axes)} axis tuples")
        used = [a for dim_axes in self.axes for a in dim_axes]
        if len(set(used)) != len(used):
            raise ValueError(f"Layout: an axis splits two dims: {self!r}")
        if self.partial & set(used):
            raise ValueError(f"Layout: split and partial over the same axis: {self!r}")

    @classmethod
    def replicated(cls, dims: tuple[str, ...]) -> Layout:
        return cls(dims, ((),) * len(dims))

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def split_axes(self) -> frozenset[str]:
        return frozenset(a for dim_axes in self.axes for a in dim_axes)

    @property
    def is_split(self) -> bool:
        return any(self.axes)

    def with_partial(self, partial: Iterable[str]) -> Layout:
        return Layout(self.dims, self.axes, frozenset(partial))

    def describe(self) -> str:
        """Human form: ``[batch/'batch', length, d_ff/'model'] partial over 'model'``."""
        parts = []
        for dim, axes in zip(self.dims, self.axes):
            parts.append(dim + "".join(f"/{a!r}" for a in axes))
        text = "[" + ", ".join(parts) + "]"
        if self.partial:
            text += " partial over " + ", ".join(repr(a) for a in sorted(self.partial))
        return text
