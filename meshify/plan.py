"""``plan``: choose a mesh shape and layout rules for a ``@mesh`` function, without compiling.

A *structure* names the mesh's axes by role and says which dims each splits: ``data`` splits the
batch dims (and, for FSDP, one weight dim of the parameters: ``{"batch": "data", "d_model":
"data"}`` splits a weight's ``d_model`` over ``data`` and leaves the activations' to the batch, as
rules resolve per value in dim order), ``model`` and ``model2`` split sets of other dims.  The
rewriter plans each structure once (its collectives do not depend on the axes' sizes), and every
factorisation of the device count into those axes is then costed by arithmetic:

- collective bytes per device, per axis, forward and backward (the transposes: a psum pairs with
  an all-reduce of the same block in the backward pass, as Megatron-LM's f/g operators do; an
  all_gather with a reduce-scatter and back; an all_to_all with an all_to_all; a softmax's two
  statistics with one), plus the gradient all-reduce of each parameter over the axes that split
  the inputs but not it;
- memory per device: parameters, gradients, optimizer state (adam 2x the parameters, sgd none),
  the other inputs, activations saved for the backward pass (each contraction's result and each
  value the body binds, times its loop trips) and the largest gathered weight;
- FLOPs per device: 2 x the local sizes of every dim of each einsum/matmul, times its loop trips;
  a training step is 3x the forward;
- estimated step time: FLOPs at the machine's peak rate plus, per collective, an alpha-beta
  time (ring bandwidth term, log2(p) latency steps) on the slowest link its axes cross.

Structures are searched exhaustively when there are few, else by a beam search that grows the
best ones a dim at a time.  Structures giving every hinted value the same layout are one (symmetry);
factorisations that leave a split dim indivisible are pruned.
"""

from __future__ import annotations

import contextlib
import gc
import math
import multiprocessing
import os
import re
import secrets
import stat
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

from meshify.annotate._types import BROADCAST, Layout, MeshSpec, Rules
from meshify.errors import AnnotationError, MeshifyError, SourceError
from meshify.explain import chosen_functions
from meshify.rewrite._collectives import collective
from meshify.rewrite._context import ModuleContext, parse_context
from meshify.rewrite._cotangents import Side as _Side
from meshify.rewrite._cotangents import side as _side
from meshify.rewrite._driver import mesh_functions
from meshify.rewrite._hints import read_mesh_decorator, read_mesh_dims
from meshify.rewrite._interp import FunctionRewriter, Record, TracedLoop

__all__ = [
    "MACHINES",
    "Candidate",
    "FunctionSearch",
    "Machine",
    "Structure",
    "apply_mesh",
    "cost_layout",
    "factorisations",
    "parse_memory",
    "plan_source",
]

GiB = 1 << 30

# -- machines -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Machine:
    """A device's peak FLOP rate and memory, and the links between devices (per direction).

    Axes are laid out minor-most first (the last mesh axis is the innermost); an axis whose devices
    span more than ``domain`` devices crosses the slow link.
    """

    key: str
    name: str
    flops: float  # FLOP/s per device, dense bf16 peak
    memory: int  # bytes per device
    bandwidth: float  # bytes/s per device per direction, within the fast domain
    latency: float  # seconds per collective step, within the fast domain
    domain: int  # devices the fast links join
    slow_bandwidth: float
    slow_latency: float
    source: str


MACHINES: dict[str, Machine] = {m.key: m for m in (
    Machine("h100", "8xH100 SXM (NVLink 4 + NVSwitch), InfiniBand NDR between hosts",
            989e12, 80 * GiB, 450e9, 5e-6, 8, 50e9, 10e-6,
            "NVIDIA H100 datasheet (SXM5): 989 TFLOPS dense BF16, 80 GB HBM3, NVLink 900 GB/s per GPU "
            "(450 GB/s each way); one 400 Gb/s NDR port per GPU between hosts; latencies assumed"),
    Machine("v5e", "TPU v5e slice (2-D torus ICI, up to 256 chips)",
            197e12, 16 * 10**9, 200e9, 2e-6, 256, 25e9, 20e-6,
            "Google Cloud TPU v5e page: 197 TFLOPS BF16 per chip, 16 GB HBM2, ICI 1,600 Gbps per chip; "
            "256 chips per pod; DCN between slices and latencies assumed"),
    Machine("v5p", "TPU v5p slice (3-D torus ICI, up to 8,960 chips)",
            459e12, 95 * 10**9, 600e9, 2e-6, 8960, 25e9, 20e-6,
            "Google Cloud TPU v5p page: 459 TFLOPS BF16 per chip, 95 GB HBM2e, ICI 4,800 Gbps per chip; "
            "8,960 chips per pod; latencies assumed"),
    Machine("cpu", "one CPU host running simulated XLA devices (meshify's tests)",
            50e9, 16 * GiB, 5e9, 20e-6, 1 << 20, 5e9, 20e-6,
            "not a spec sheet: order-of-magnitude numbers for XLA:CPU devices sharing one host "
            "(50 GFLOP/s and 5 GB/s copies per device); --measure shows how far off they are"),
)}


def parse_memory(text: str) -> int:
    """``"16GiB"``, ``"80 GB"``, ``"512MiB"``, ``"1.5TiB"`` or plain bytes -> bytes."""
    units = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
             "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", text)
    if match is None or match.group(2).lower() not in units or float(match.group(1)) <= 0:
        raise AnnotationError(f"--memory {text!r} is not a size", fix="write --memory 16GiB (or 80GB, 512MiB, bytes)")
    return int(float(match.group(1)) * units[match.group(2).lower()])


# -- structures -----------------------------------------------------------------------------------

#: Mesh axis names by role, in mesh order (major to minor).
DATA, MODEL_AXES = "data", ("model", "model2")


@dataclass(frozen=True, slots=True)
class Structure:
    """The mesh's axes by role and the dims each splits (sizes come later)."""

    data: bool
    fsdp: str | None = None
    model: tuple[tuple[str, ...], ...] = ()

    @property
    def axes(self) -> tuple[str, ...]:
        return ((DATA,) if self.data else ()) + MODEL_AXES[:len(self.model)]

    def rules(self, batch: tuple[str, ...], dims: tuple[str, ...]) -> dict[str, object]:
        """The rules dict, in the order the dims first appear in the function."""
        table: dict[str, object] = {}
        if self.data:
            table.update({d: DATA for d in batch})
            if self.fsdp:
                table[self.fsdp] = DATA
        for axis, group in zip(MODEL_AXES, self.model):
            table.update({d: axis for d in group})
        for d in dims:  # a dim named like one of our axes would go to it unasked
            if d in (DATA, *MODEL_AXES) and d not in table:
                table[d] = None
        order = {d: i for i, d in enumerate(dims)}
        axes = (DATA, *MODEL_AXES, None)
        return dict(sorted(table.items(), key=lambda kv: (axes.index(kv[1]), kv[0] not in batch,
                                                           order.get(kv[0], len(order)))))

    def moves(self, model_dims: tuple[str, ...], fsdp_dims: tuple[str, ...], batch: bool) -> Iterator[Structure]:
        """Structures one step larger: a dim added to a model axis, a new model axis, FSDP, a data axis."""
        used = {d for g in self.model for d in g} | ({self.fsdp} if self.fsdp else set())
        free = [d for d in model_dims if d not in used]
        for i, group in enumerate(self.model):
            for d in free:
                yield self._with_model(i, (*group, d), model_dims)
        if len(self.axes) < 3:
            for d in free:
                yield Structure(self.data, self.fsdp, _canonical((*self.model, (d,)), model_dims))
            if batch and not self.data:
                yield Structure(True, None, self.model)
        if self.data and self.fsdp is None:
            for d in fsdp_dims:
                if d not in used:
                    yield Structure(True, d, self.model)

    def _with_model(self, i: int, group: tuple[str, ...], order: tuple[str, ...]) -> Structure:
        model = list(self.model)
        model[i] = group
        return Structure(self.data, self.fsdp, _canonical(tuple(model), order))


def _canonical(model: tuple[tuple[str, ...], ...], order: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """Model axes are interchangeable (the factorisations try every size order): each group in the
    function's dim order, the groups by their first dim."""
    groups = [tuple(sorted(g, key=order.index)) for g in model]
    return tuple(sorted(groups, key=lambda g: order.index(g[0])))


def all_structures(model_dims: tuple[str, ...], fsdp_dims: tuple[str, ...], batch: bool) -> Iterator[Structure]:
    """Every structure of 1 to 3 axes: each model dim on no axis, ``model`` or ``model2``."""
    for data in ((False, True) if batch else (False,)):
        for assignment in _assignments(len(model_dims), len(MODEL_AXES)):
            model = tuple(tuple(d for d, a in zip(model_dims, assignment) if a == k)
                          for k in range(1, max(assignment, default=0) + 1))
            if not data and not model:
                continue
            yield Structure(data, None, model)
            groups = model
            if data:
                used = {d for g in groups for d in g}
                for f in fsdp_dims:
                    if f not in used:
                        yield Structure(True, f, model)


def _assignments(m: int, axes: int) -> Iterator[tuple[int, ...]]:
    """Each of ``m`` dims on axis 0 (none) .. ``axes``, model axes numbered in first-use order (so
    each set of groups comes once: the canonical order of :func:`_canonical`)."""
    def rec(prefix: tuple[int, ...], top: int) -> Iterator[tuple[int, ...]]:
        if len(prefix) == m:
            yield prefix
            return
        for a in range(min(top + 1, axes) + 1):
            yield from rec((*prefix, a), max(top, a))
    yield from rec((), 0)


def factorisations(n: int, parts: int) -> list[tuple[int, ...]]:
    """Ordered ways to write ``n`` as a product of ``parts`` factors, each at least 2."""
    if parts == 1:
        return [(n,)] if n >= 2 else []
    out = []
    for f in range(2, n + 1):
        if n % f == 0:
            out += [(f, *rest) for rest in factorisations(n // f, parts - 1)]
    return out


# -- one structure, planned -----------------------------------------------------------------------

_PSEUDO = "plan:"  # the records plan's observers add (not collectives)
_FLOPS, _SAVED = "plan:flops", "plan:saved"
#: An operand JAX broadcasts over mesh axes it does not vary over (``pvary``, inserted where it meets
#: operands that do): the backward pass all-reduces its cotangent over them.  A weight meeting
#: activations split over ``data`` is one: its gradient's all-reduce is data parallelism's.
_BROADCAST = "plan:broadcast"
#: An operand gathered as varying (FSDP): the backward pass reduce-scatters its cotangent back.
_SCATTER = "plan:scatter"
#: Such an operand in a loop body under ``mr.regathering`` (``@mesh(regather=True)``, the default):
#: the backward pass gathers it again.
_REGATHER = "plan:regather"
#: A ``_SCATTER`` record's ``dim`` where the gathered operand is a contraction's.
_CONTRACTED = "contracted"
_patch_lock = threading.Lock()
#: Whether helper versions are reused across the layouts of one search (see ``_rewrite``); tests turn it
#: off to check that reuse changes nothing.
SHARE_VERSIONS = True


@contextlib.contextmanager
def _observing(sizes: dict[str, int]) -> Iterator[None]:
    """While rewriting, every einsum/matmul also leaves records: the dims of each pairwise contraction
    it runs, with their splits (for FLOPs), and its result's layout (saved for the backward pass); and
    every op whose operands vary over different mesh axes, the backward collectives that makes.
    Records carry the loop trips and are copied into each caller of a helper, as collectives are."""
    from meshify.rewrite import _interp
    from meshify.rewrite.rules import contractions

    # Contractions of three or more operands, planned and not yet converted: jnp.einsum runs them
    # pairwise, so what JAX broadcasts (and the backward pass all-reduces) is per pairwise step.
    nary: list[tuple[list, list[str], dict]] = []
    # The conversions of contractions' operands: a weight gathered for one is regathered in a loop under
    # mr.regathering (JAX saves elementwise ops' broadcast operands instead).
    contracted: dict[int, object] = {}  # id -> the Convert, held so that no id is reused

    def counted(rw, value, converts, inputs, what):
        split: dict[str, tuple[str, tuple[str, ...]]] = {}
        for c, letters in zip(converts, inputs):
            if c is not None:
                for letter, dim, axes in zip(letters, c.layout.dims, c.layout.axes):
                    split.setdefault(letter, (dim, axes))
        loops = rw.loops
        steps = _path(inputs, value.layout.dims, split, sizes)
        for _taken, letters, _result in steps:
            rw.records.append(Record(rw._line, _FLOPS, (), what, "", _letters_layout(letters, split), loops))
        rw.records.append(Record(rw._line, _SAVED, (), what, "", value.layout.with_partial(()), loops))
        contracted.update((id(c), c) for c in converts if c is not None)
        if len(steps) > 1:
            nary.append((list(converts), list(inputs), split, steps))

    def observed(rw, converts):
        for i, (planned, inputs, split, steps) in enumerate(nary):
            given = [c for c in planned if c is not None]
            if len(given) == len(converts) and all(a is b for a, b in zip(given, converts)):
                del nary[i]
                _pairwise_broadcasts(rw, planned, inputs, split, steps)
                return
        _broadcasts(rw, converts, bool(converts) and all(id(c) in contracted for c in converts))

    with _patch_lock:
        contractions.OBSERVERS.append(counted)
        _interp.OPERAND_OBSERVERS.append(observed)
        try:
            yield
        finally:
            contractions.OBSERVERS.remove(counted)
            _interp.OPERAND_OBSERVERS.remove(observed)


def _broadcast(rw, side: _Side, union: set[str], layout: Layout, contraction: bool = True) -> None:
    """Records the backward all-reduce of a ``layout`` block JAX broadcasts (``pvary``) over the axes
    of ``union`` that ``side`` does not vary over, and a reduce-scatter per varying gather of it
    (``contraction``: an operand of one, whose gathered block the backward pass reads: under
    ``mr.regathering`` gathered again; an elementwise op's backward reads its broadcast instead)."""
    if not side.reason:
        return
    loops = rw.loops
    missing = tuple(a for a in rw.mesh.names if a in union - side.vary)
    if missing:
        rw.records.append(Record(rw._line, _BROADCAST, missing, "", side.reason, layout.with_partial(()), loops))
    for s in side.slices:
        rw.records.append(Record(rw._line, _BROADCAST, s.axes, "", side.reason, s.layout, loops))
    for g in side.gathers:
        rw.records.append(Record(rw._line, _SCATTER, g.axes, _CONTRACTED if contraction else "", side.reason,
                                 g.layout, loops))


def _broadcasts(rw, converts, contraction: bool) -> None:
    """Records what the backward pass sends for one op's operands (converted as ``converts`` say):
    an all-reduce of each differentiable operand's block over the axes other operands vary over and
    it does not (JAX's ``pvary``, transposed), and of its whole block where a conversion slices it
    over such axes, and a reduce-scatter for each all_gather of it made as varying (FSDP's)."""
    sides = [_side(rw, c) for c in converts]
    union = set().union(*(s.vary for s in sides))
    for c, side in zip(converts, sides):
        _broadcast(rw, side, union, c.layout, contraction)


def _pairwise_broadcasts(rw, converts, inputs, split, steps) -> None:
    """As :func:`_broadcasts`, for an einsum jnp.einsum runs as ``steps`` (see :func:`_path`): each
    step broadcasts its two operands (the einsum's own, converted, or an earlier step's result, which
    varies over the axes of both of its operands) to the axes either varies over."""
    operands: list[tuple[_Side, Layout]] = []
    for c, letters in zip(converts, inputs):
        if c is None:
            operands.append((_Side(frozenset(), (), (), ""), _letters_layout(letters, split)))
        else:
            operands.append((_side(rw, c), c.layout))
    for taken, _letters, result in steps:
        pairs = [operands.pop(i) for i in taken]
        union = set().union(*(side.vary for side, _ in pairs))
        for side, layout in pairs:
            _broadcast(rw, side, union, layout)
        reason = " ".join(dict.fromkeys(" ".join(side.reason for side, _ in pairs).split()))
        operands.append((_Side(frozenset(union), (), (), reason), _letters_layout(result, split)))


def _path(inputs, out_dims: tuple[str, ...], split: dict, sizes: dict[str, int]) -> list:
    """The pairwise contractions of an einsum, in the order ``jnp.einsum`` runs them (opt_einsum's
    path for the global sizes): ``bhqs,bshk,hkd->bqd`` is two contractions, not one over all six
    letters.  Each is (the positions it takes from the operand list, in the order jnp.einsum pops
    them; the letters it spans; the letters of its result, appended to the list).  Letters of one
    dim name have one size, so which of them the output keeps changes no cost."""
    letters = "".join(dict.fromkeys("".join(inputs)))
    if len(inputs) < 3 or not letters.isalpha() or set(letters) - set(split):
        return [(tuple(range(len(inputs))), letters, "")]
    import opt_einsum  # type: ignore[import-untyped]

    wanted = list(out_dims)
    output = ""
    for letter in letters:
        if split[letter][0] in wanted:
            wanted.remove(split[letter][0])
            output += letter
    shapes = [tuple(sizes.get(split[c][0], 1) for c in term) for term in inputs]
    _path, info = opt_einsum.contract_path(",".join(inputs) + "->" + output, *shapes, shapes=True, optimize="auto")
    return [(tuple(step[0]), "".join(dict.fromkeys(step[2].split("->")[0].replace(",", ""))), step[2].split("->")[1])
            for step in info.contraction_list]


def _letters_layout(letters: str, split: dict) -> Layout:
    """The layout of an einsum's letters (for FLOPs); whole where two letters share an axis."""
    dims = tuple(split[c][0] for c in letters)
    try:
        return Layout(dims, tuple(split[c][1] for c in letters))
    except ValueError:
        return Layout.replicated(dims)


@dataclass(slots=True)
class _Term:
    """One costed thing of a planned structure: its dims, their axes, how often it runs."""

    kind: str
    axes: tuple[str, ...]
    dims: tuple[str, ...]
    split: tuple[tuple[str, ...], ...]
    trips: int
    #: A forward collective's instructions XLA runs (those not merged with an equal one), and how often its
    #: transpose runs in the backward pass (every iteration: each has its own cotangent).
    instructions: int = 1
    backward_trips: int = 0


@dataclass(slots=True)
class Planned:
    """What the rewriter says about one structure, ready to cost for any axis sizes."""

    structure: Structure | None  # None: a layout given whole (cost_layout)
    rules: dict[str, object]
    leaves: list[tuple[str, Layout, bool]]  # name, layout, is a parameter (probe: is a float array)
    terms: list[_Term]
    values: list[Layout]
    error: str = ""


# -- the search -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Candidate:
    """One mesh shape and rules, costed."""

    mesh: dict[str, int]
    rules: dict[str, object]
    forward_bytes: dict[str, int]
    backward_bytes: dict[str, int]
    memory: dict[str, int]
    flops: float
    compute_s: float
    comm_s: dict[str, float]
    time_s: float
    dominant: str
    fits: bool
    forward_s: float = 0.0  # the forward pass alone (compute and its collectives)
    structure: Structure | None = None

    @property
    def collective_bytes(self) -> int:
        return sum(self.forward_bytes.values()) + sum(self.backward_bytes.values())

    @property
    def memory_bytes(self) -> int:
        return sum(self.memory.values())

    @property
    def decorator(self) -> str:
        axes = ", ".join(f"{n}={s}" for n, s in self.mesh.items())
        rules = "{" + ", ".join(f"{k!r}: {v!r}".replace("'", '"') for k, v in self.rules.items()) + "}"
        return f"@mesh({axes}, rules={rules})" if self.rules else f"@mesh({axes})"

    def key(self) -> tuple:
        return (self.time_s, self.collective_bytes, self.memory_bytes, self.decorator)

    def to_json(self) -> dict:
        return {"mesh": dict(self.mesh), "rules": dict(self.rules), "decorator": self.decorator,
                "collective_bytes_per_device": {"forward": dict(self.forward_bytes),
                                                "backward": dict(self.backward_bytes),
                                                "total": self.collective_bytes},
                "memory_bytes_per_device": {**self.memory, "total": self.memory_bytes},
                "flops_per_device": self.flops,
                "time_s": {"compute": self.compute_s, "communication": dict(self.comm_s), "total": self.time_s,
                           "forward": self.forward_s},
                "dominant": self.dominant, "fits": self.fits}


@dataclass(slots=True)
class FunctionSearch:
    """The ranked candidates for one function."""

    name: str
    line: int
    devices: int
    machine: str
    memory_budget: int
    optimizer: str
    batch: tuple[str, ...]
    search: str  # "exhaustive" or "beam"
    structures: int  # rewritten
    candidates: list[Candidate] = field(default_factory=list)  # costed and fitting, best first
    rejected: list[Candidate] = field(default_factory=list)  # over the memory budget, smallest first
    unsupported: list[tuple[str, str]] = field(default_factory=list)  # (rules, meshify's reason)
    pruned: int = 0  # factorisations with an indivisible split dim

    @property
    def best(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None

    @property
    def costed(self) -> int:
        return len(self.candidates) + len(self.rejected)

    def to_json(self, top: int | None = None) -> dict:
        shown = self.candidates[:top] if top else self.candidates
        return {"function": self.name, "line": self.line, "devices": self.devices, "machine": self.machine,
                "memory_budget_bytes": self.memory_budget, "optimizer": self.optimizer,
                "batch_dims": list(self.batch), "search": self.search, "structures_rewritten": self.structures,
                "candidates_costed": self.costed, "pruned_indivisible": self.pruned,
                "best": self.best.decorator if self.best else None,
                "candidates": [c.to_json() for c in shown],
                "rejected_for_memory": [c.to_json() for c in self.rejected[:top] if top] if top else
                                       [c.to_json() for c in self.rejected],
                "unsupported": [{"rules": r, "reason": why} for r, why in self.unsupported]}


@dataclass(slots=True)
class _Problem:
    ctx: ModuleContext
    fn: cst.FunctionDef
    sizes: dict[str, int]
    devices: int
    machine: Machine
    memory: int
    optimizer: str
    itemsize: int
    where: str
    #: The sizes ``@mesh(dims=...)`` writes: all the decorator's rewrite sees (it chooses which side of a
    #: contraction to gather by them), so all plan's rewrite sees, so that what plan costs is what the
    #: ``@mesh`` line it writes compiles to.  ``sizes`` (with ``--dims``) only cost the result.
    declared: dict[str, int] = field(default_factory=dict)
    batch: tuple[str, ...] = ()
    dims: tuple[str, ...] = ()  # every hinted dim, in first-appearance order
    params: frozenset[str] = frozenset()  # parameter leaves (get gradients and optimizer state)
    dim_tuples: tuple[tuple[str, ...], ...] = ()  # for symmetry signatures
    cache: dict = field(default_factory=dict)


def plan_source(source: str | bytes, path: str, devices: int, sizes: dict[str, int], func: str | None = None,
                machine: str = "h100", memory: int | None = None, optimizer: str = "adam", itemsize: int = 4,
                batch: tuple[str, ...] | None = None, beam: int = 3) -> list[FunctionSearch]:
    """Searches mesh shapes and rules for each ``@mesh`` function of a module (or just ``func``)."""
    return [_search(problem, batch, beam)
            for problem in _problems(source, path, devices, sizes, func, machine, memory, optimizer, itemsize)]


def cost_layout(source: str | bytes, path: str, func: str, sizes: dict[str, int], mesh: dict[str, int],
                rules: dict[str, object], machine: str = "h100", memory: int | None = None, optimizer: str = "adam",
                itemsize: int = 4, batch: tuple[str, ...] | None = None) -> Candidate:
    """One given mesh and rules costed as plan costs its candidates, whether or not a search would
    reach it: the layout a paper or a person chose, to read a search's pick against."""
    problem, = _problems(source, path, math.prod(mesh.values()), sizes, func, machine, memory, optimizer, itemsize)
    _describe(problem, batch)
    planned = _planned(problem, None, tuple(mesh), dict(rules))
    if planned.error:
        raise problem.ctx.error(MeshifyError, problem.fn.name, f"{problem.where}: meshify cannot rewrite it "
                                f"under {_rules_text(planned.rules)}: {planned.error}", "see meshify explain")
    if not _divisible(problem, planned, mesh):
        raise problem.ctx.error(AnnotationError, problem.fn.name, f"{problem.where}: a dim split under "
                                f"{_rules_text(planned.rules)} is not divisible by its axes {mesh}",
                                "choose sizes the mesh axes divide")
    return _cost(problem, planned, dict(mesh))


def _problems(source: str | bytes, path: str, devices: int, sizes: dict[str, int], func: str | None, machine: str,
              memory: int | None, optimizer: str, itemsize: int) -> list[_Problem]:
    """The arguments checked, and one problem per chosen ``@mesh`` function."""
    if machine not in MACHINES:
        raise AnnotationError(f"--machine {machine!r} is not a preset",
                              fix="choose one of: " + ", ".join(MACHINES))
    if optimizer not in ("adam", "sgd"):
        raise AnnotationError(f"--optimizer {optimizer!r} is not known", fix="choose adam or sgd")
    if devices < 2:
        raise AnnotationError(f"--devices {devices}: plan needs 2 or more devices", fix="pass --devices 8")
    ctx = parse_context(source, path)
    spec = MACHINES[machine]
    out = []
    for fn, decorator in chosen_functions(ctx, path, func):
        read_mesh_decorator(ctx, decorator)  # the decorator must be readable (it is replaced by --apply)
        declared = read_mesh_dims(ctx, decorator)
        out.append(_Problem(ctx, fn, {**declared, **sizes}, devices, spec,
                            memory if memory is not None else spec.memory, optimizer, itemsize,
                            f"{path}::{fn.name.value}", declared))
    return out


def _search(problem: _Problem, batch: tuple[str, ...] | None, beam: int) -> FunctionSearch:
    _describe(problem, batch)
    n = problem.devices
    usable = tuple(d for d in problem.dims if d not in problem.batch and d in problem.sizes
                   and math.gcd(problem.sizes[d], n) > 1)
    param_dims = {d for name, layout, _ in _probe(problem).leaves if name in problem.params for d in layout.dims}
    fsdp = tuple(d for d in usable if d in param_dims)
    has_batch = any(d in problem.sizes and math.gcd(problem.sizes[d], n) > 1 for d in problem.batch)
    result = FunctionSearch(problem.fn.name.value, problem.ctx.line(problem.fn.name), n, problem.machine.key,
                            problem.memory, problem.optimizer, problem.batch, "exhaustive", 0)
    seen: dict[tuple, tuple[Planned, tuple, list[Candidate]]] = {}
    ahead: dict[Structure, _Evaluated] = {}  # planned and costed by worker processes, not yet visited

    def visit(s: Structure) -> tuple | None:
        signature = _signature(problem, s)
        if signature is None:
            return None
        if signature in seen:
            return seen[signature][1]
        planned, costs, pruned = ahead.pop(s, None) or _evaluate(problem, s)
        result.structures += 1
        result.pruned += pruned
        seen[signature] = (planned, _score(costs) if not planned.error else (2, 0.0), costs)
        if planned.error:
            result.unsupported.append((_rules_text(planned.rules), planned.error))
        return seen[signature][1]

    def prefetch(structures) -> None:
        """Plans, on worker processes where that pays, each structure whose layouts are new."""
        todo: dict[tuple, Structure] = {}
        for s in structures:
            signature = _signature(problem, s)
            if signature is not None and signature not in seen and signature not in todo:
                todo[signature] = s
        ahead.update(zip(todo.values(), pool.evaluate(todo.values())))

    space = _space_size(len(usable), len(fsdp), has_batch)
    with _Pool(problem, space) as pool:
        if space <= 96:
            structures = list(all_structures(usable, fsdp, has_batch))
            prefetch(structures)
            for s in structures:
                visit(s)
        else:
            _beam(result, usable, fsdp, has_batch, beam, visit, prefetch)
    for _planned, _score_, costs in seen.values():
        for c in costs:
            (result.candidates if c.fits else result.rejected).append(c)
    result.candidates.sort(key=Candidate.key)
    result.rejected.sort(key=lambda c: (c.memory_bytes, c.key()))
    result.unsupported.sort()
    return result


def _beam(result: FunctionSearch, usable: tuple[str, ...], fsdp: tuple[str, ...], has_batch: bool, beam: int,
          visit, prefetch) -> None:
    """Grows the ``beam`` best structures a dim at a time while that finds a better one."""
    result.search = "beam"
    frontier = [Structure(True)] if has_batch else []
    frontier += [Structure(False, None, ((d,),)) for d in usable]
    frontier += [Structure(True, None, ((d,),)) for d in usable] if has_batch else []
    frontier += [Structure(True, f) for f in fsdp] if has_batch else []
    prefetch(frontier)
    scored = {s: visit(s) for s in frontier}
    # A dim (or FSDP dim) meshify cannot split on its own is not tried in larger structures.
    usable = tuple(d for d in usable if scored.get(Structure(True, None, ((d,),)) if has_batch
                                                  else Structure(False, None, ((d,),))) != (2, 0.0))
    fsdp = tuple(f for f in fsdp if scored.get(Structure(True, f)) != (2, 0.0))
    expanded: set[Structure] = set()
    record = None
    for _ in range(2 * len(usable) + 3):
        best = sorted((sc, repr(s), s) for s, sc in scored.items() if sc is not None)[:beam]
        todo = [s for _, _, s in best if s not in expanded]
        if not todo or (record is not None and best[0][0] >= record):
            break  # the last round found nothing better: stop
        record = best[0][0]
        prefetch([nxt for s in todo for nxt in s.moves(usable, fsdp, has_batch) if nxt not in scored])
        for s in todo:
            expanded.add(s)
            for nxt in s.moves(usable, fsdp, has_batch):
                if nxt not in scored:
                    scored[nxt] = visit(nxt)


#: The problem a forked worker plans structures of (set before the fork, read in the child).
_WORKER_PROBLEM: _Problem | None = None


#: A structure planned, its factorisations costed, and how many of them were pruned as indivisible.
_Evaluated = tuple[Planned, list[Candidate], int]


def _evaluate(problem: _Problem, structure: Structure) -> _Evaluated:
    planned = _plan(problem, structure)
    if planned.error:
        return planned, [], 0
    return planned, *_costs(problem, planned)


def _in_worker(structure: Structure) -> _Evaluated:
    assert _WORKER_PROBLEM is not None
    return _evaluate(_WORKER_PROBLEM, structure)


class _Pool:
    """Worker processes planning structures in parallel (each rewrite is independent and pure Python).

    Forked, so that each worker has the parsed module already; only where JAX is not imported in this
    process (forking JAX's threads can deadlock: ``meshify plan`` never imports it) and there are
    enough structures to pay for the start.  ``MESHIFY_PLAN_JOBS=1`` plans in this process."""

    def __init__(self, problem: _Problem, structures: int) -> None:
        self.problem = problem
        self.jobs = _jobs(structures)
        self.pool = None

    def __enter__(self) -> _Pool:
        return self

    def evaluate(self, structures) -> list[_Evaluated]:
        structures = list(structures)
        if self.jobs < 2 or len(structures) < 2 * self.jobs:
            return [_evaluate(self.problem, s) for s in structures]
        if self.pool is None:
            global _WORKER_PROBLEM
            _WORKER_PROBLEM = self.problem
            gc.freeze()  # the parsed module stays shared: no collection in a worker touches (copies) it
            try:
                self.pool = multiprocessing.get_context("fork").Pool(self.jobs)  # the workers fork here
            finally:
                _WORKER_PROBLEM = None
                gc.unfreeze()  # (in this process: collected as before)
        return self.pool.map(_in_worker, structures, chunksize=1)

    def __exit__(self, *exc) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()


def _jobs(structures: int) -> int:
    """How many worker processes plan ``structures`` structures (1: none, plan here)."""
    given = os.environ.get("MESHIFY_PLAN_JOBS", "")
    if given.isdigit() and int(given) > 0:
        return int(given) if "jax" not in sys.modules else 1
    if structures < 16 or "jax" in sys.modules or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 8))


def _space_size(m: int, f: int, batch: bool) -> int:
    """How many structures :func:`all_structures` yields, at most (FSDP counted for every model set)."""
    one, two = 2 ** m - 1, (3 ** m - 2 ** (m + 1) + 1) // 2
    with_data = (1 + one + two) * (1 + f) if batch else 0
    return with_data + one + two


def _rules_text(rules: dict[str, object]) -> str:
    return "{" + ", ".join(f'"{k}": ' + ("None" if v is None else f'"{v}"') for k, v in rules.items()) + "}"


def _describe(problem: _Problem, batch: tuple[str, ...] | None) -> None:
    """The function's dims, batch dims and parameter leaves, from one rewrite with nothing split."""
    probe = _probe(problem)
    dims: dict[str, None] = {}
    tuples: dict[tuple[str, ...], None] = {}
    for name, layout, _ in probe.leaves:
        dims.update(dict.fromkeys(layout.dims))
        tuples[layout.dims] = None
    for layout in probe.values:
        tuples[layout.dims] = None
    for t in probe.terms:
        tuples[t.dims] = None
    dims.pop(BROADCAST, None)
    problem.dims = tuple(dims)
    problem.dim_tuples = tuple(tuples)
    if batch is None:
        batch = tuple(d for d in problem.dims if "batch" in d.lower())
    unknown = [b for b in batch if b not in dims]
    if unknown:
        raise problem.ctx.error(AnnotationError, problem.fn.name,
                                f"{problem.where}: batch dim {unknown[0]!r} is no dim of the function's arguments",
                                "pass --batch with some of: " + ", ".join(problem.dims))
    problem.batch = tuple(batch)
    missing = [d for name, layout, _ in probe.leaves for d in layout.dims
               if d != BROADCAST and d not in problem.sizes]
    if missing:
        names = list(dict.fromkeys(missing))
        raise problem.ctx.error(AnnotationError, problem.fn.name,
                                f"{problem.where}: no size for dim{'s' if len(names) > 1 else ''} "
                                + ", ".join(repr(d) for d in names),
                                "pass them with --dims " + ",".join(f"{d}=N" for d in names))
    # A parameter: a float array leaf without a batch dim (it gets a gradient and optimizer state).
    problem.params = frozenset(name for name, layout, floating in probe.leaves
                               if floating and not set(layout.dims) & set(problem.batch))


def _probe(problem: _Problem) -> Planned:
    """The function rewritten on a one-axis mesh no dim maps to (everything whole)."""
    if "probe" not in problem.cache:
        mesh = MeshSpec(("plan_probe",), (2,))
        planned = _rewrite(problem, Structure(False), mesh, Rules(mesh))
        if planned.error:
            raise problem.ctx.error(MeshifyError, problem.fn.name, f"{problem.where}: meshify cannot rewrite it "
                                    f"even with every dim whole: {planned.error}", "see meshify explain")
        problem.cache["probe"] = planned
    return problem.cache["probe"]


def _rewrite(problem: _Problem, structure: Structure | None, mesh: MeshSpec, rules: Rules) -> Planned:
    rules_dict = rules.as_dict()
    # A version made for an earlier layout is reused where the rules it read agree (Specializations.shared):
    # a layout that splits `vocab` differently rewrites no block that never reads `vocab`'s rule.  Names
    # are never reused, so that no two versions of one layout share one.
    registry = problem.ctx.specializations
    registry.versions.clear()
    registry.merge_twins = False
    if registry.shared is None and SHARE_VERSIONS:
        registry.shared = {}
    try:
        with _observing(problem.sizes):
            plan = FunctionRewriter(problem.ctx, problem.fn, mesh, rules, sizes=problem.declared,
                                    assume_defaults=True).run()
    except MeshifyError as e:
        return Planned(structure, rules_dict, [], [], [], error=e.headline)
    integer = plan.index_params | plan.key_params
    leaves = []
    for name, layout in plan.in_layouts.items():
        root = name.split(".")[0]
        leaves.append((name, layout, name not in integer and root not in integer and bool(layout.dims)))
    from meshify.explain import _trips, distinct

    # the forward collectives as XLA leaves them (one per distinct value and scope), as explain counts them;
    # their transposes in the backward pass each run (their cotangents differ)
    forward = {id(d.record): d for d in distinct([r for r in plan.records if not r.kind.startswith(_PSEUDO)])}
    terms = []
    for r in plan.records:
        if r.kind in (_BROADCAST, _SCATTER) and set(r.reason.split()) <= integer:
            continue  # an integer parameter's: no cotangent
        if r.kind not in (_FLOPS, _SAVED, _BROADCAST, _SCATTER) and id(r) not in forward:
            continue
        trips = _trips(r.loops, problem.sizes, problem.where, r.line)
        d = forward.get(id(r))
        if d is not None:
            terms.append(_Term(r.kind, r.axes, r.layout.dims, r.layout.axes,
                               _trips(d.loops, problem.sizes, problem.where, r.line), len(d.fresh), trips))
            continue
        terms.append(_Term(r.kind, r.axes, r.layout.dims, r.layout.axes, trips))
        if r.kind == _SCATTER and r.regathered and r.dim == _CONTRACTED:
            # (a loop run once is no loop to XLA: it merges the gather redone with the forward pass's)
            traced = tuple(t for t in r.loops if isinstance(t, TracedLoop))
            if _trips(traced, problem.sizes, problem.where, r.line) != 1:
                terms.append(_Term(_REGATHER, r.axes, r.layout.dims, r.layout.axes, trips))
    values = [b.layout for b in plan.bindings]
    return Planned(structure, rules_dict, leaves, terms, values)


def _plan(problem: _Problem, structure: Structure) -> Planned:
    return _planned(problem, structure, structure.axes, structure.rules(problem.batch, problem.dims))


def _planned(problem: _Problem, structure: Structure | None, axes: tuple[str, ...],
             rules_dict: dict[str, object]) -> Planned:
    """The function rewritten under ``rules_dict`` on a mesh of ``axes`` (each of size 2: the
    collectives do not depend on the sizes)."""
    mesh = MeshSpec(axes, (2,) * len(axes))
    planned = _rewrite(problem, structure, mesh, Rules.parse(mesh, rules_dict))
    planned.rules = rules_dict
    if not planned.error:  # the leaves' roles come from the probe (a split changes no role)
        planned.leaves = [(n, layout, n in problem.params) for n, layout, _ in planned.leaves]
    return planned


def _signature(problem: _Problem, s: Structure) -> tuple | None:
    """Every hinted value's layout under ``s`` (None if an axis splits nothing: a wasted axis)."""
    mesh = MeshSpec(s.axes, (2,) * len(s.axes))
    rules = Rules.parse(mesh, s.rules(problem.batch, problem.dims))
    layouts = tuple(rules.layout(t).axes for t in problem.dim_tuples)
    used = {a for axes in layouts for dim_axes in axes for a in dim_axes}
    if used != set(s.axes):
        return None
    return (s.axes, layouts)


def _score(costs: list[Candidate]) -> tuple:
    """For the beam: (0, best time) if some factorisation fits, else (1, least memory)."""
    fitting = [c.time_s for c in costs if c.fits]
    if fitting:
        return (0, min(fitting))
    return (1, float(min((c.memory_bytes for c in costs), default=math.inf)))


# -- costs ----------------------------------------------------------------------------------------

#: The collective a forward one transposes to in the backward pass (JAX's transposition rules under
#: ``check_vma``): a psum of a varying value to a free ``pvary``, an invariant all_gather to a local
#: slice (a varying one, FSDP's, to a reduce-scatter: a ``_SCATTER`` record), a halo's ppermute to the
#: reverse ppermute; the sharded softmax/log_softmax/var/std divide a varying value by an all-reduced
#: statistic (whose cotangent is all-reduced), and pmax/pmin's derivative all-reduces which devices hit.
_BACKWARD = {"psum_scatter": "all-gather", "all_to_all": "all-to-all", "softmax": "all-reduce",
             "log_softmax": "all-reduce", "var": "all-reduce", "std": "all-reduce", "masked_var": "all-reduce",
             "nanmax": "all-reduce", "nanmin": "all-reduce",
             "pmax": "all-reduce", "pmin": "all-reduce", "prod": "reduce-scatter", "cumsum": "reduce-scatter",
             "cumprod": "reduce-scatter", "scan_totals": "reduce-scatter"}


def _transpose(kind: str) -> str | None:
    """The HLO collective the backward pass runs for a forward ``kind`` (None: nothing)."""
    hlo = collective(kind).hlo
    return "collective-permute" if hlo == "collective-permute" else _BACKWARD.get(kind)


def _costs(problem: _Problem, planned: Planned) -> tuple[list[Candidate], int]:
    """Every factorisation of the devices into the structure's axes costed, and how many were pruned
    (a split dim they do not divide)."""
    out, pruned = [], 0
    assert planned.structure is not None  # a searched layout has one
    axes = planned.structure.axes
    for shape in factorisations(problem.devices, len(axes)):
        mesh = dict(zip(axes, shape))
        if not _divisible(problem, planned, mesh):
            pruned += 1
            continue
        out.append(_cost(problem, planned, mesh))
    return out, pruned


def _divisible(problem: _Problem, planned: Planned, mesh: dict[str, int]) -> bool:
    layouts = [(layout.dims, layout.axes) for _, layout, _ in planned.leaves]
    layouts += [(t.dims, t.split) for t in planned.terms] + [(v.dims, v.axes) for v in planned.values]
    for dims, split in layouts:
        for d, a in zip(dims, split):
            if a and d in problem.sizes and problem.sizes[d] % math.prod(mesh[x] for x in a):
                return False
    return True


def _local(problem: _Problem, mesh: dict[str, int], dims, split) -> int:
    """Elements of the local block (dims without a size, such as einsum placeholders, count 1)."""
    total = 1
    for d, a in zip(dims, split):
        if d != BROADCAST and d in problem.sizes:
            total *= problem.sizes[d] // math.prod(mesh[x] for x in a)
    return total


def _link(problem: _Problem, mesh: dict[str, int], axes: tuple[str, ...]) -> tuple[float, float]:
    """(bandwidth, latency) of the slowest link the group ``axes`` crosses (minor axes innermost)."""
    m = problem.machine
    inner = 1
    span = 1
    for name in reversed(list(mesh)):
        inner *= mesh[name]
        if name in axes:
            span = inner
    return (m.bandwidth, m.latency) if span <= m.domain else (m.slow_bandwidth, m.slow_latency)


def _seconds(hlo: str, returned: int, p: int, link: tuple[float, float]) -> float:
    """Alpha-beta time of one instruction returning ``returned`` bytes per device over ``p`` devices."""
    bandwidth, latency = link
    steps = max(1, math.ceil(math.log2(p)))
    if hlo == "all-reduce":
        return 2 * (p - 1) / p * returned / bandwidth + 2 * steps * latency
    if hlo == "reduce-scatter":
        return (p - 1) * returned / bandwidth + steps * latency
    return (p - 1) / p * returned / bandwidth + steps * latency  # all-gather (returned = whole), all-to-all


def _returned(hlo: str, local: int, p: int) -> int:
    return local * p if hlo == "all-gather" else local // p if hlo == "reduce-scatter" else local


def _cost(problem: _Problem, planned: Planned, mesh: dict[str, int]) -> Candidate:
    item = problem.itemsize
    fwd: dict[str, int] = {}
    bwd: dict[str, int] = {}
    comm: dict[str, float] = {}
    forward_comm = 0.0
    flops = 0.0
    saved = 0
    gathered = 0

    def add(table: dict[str, int], hlo: str, axes: tuple[str, ...], local: int, count: int) -> None:
        p = math.prod(mesh[a] for a in axes)
        returned = _returned(hlo, local, p)
        label = "+".join(axes)
        table[label] = table.get(label, 0) + returned * count
        comm[label] = comm.get(label, 0.0) + _seconds(hlo, returned, p, _link(problem, mesh, axes)) * count

    for t in planned.terms:
        local = _local(problem, mesh, t.dims, t.split)
        if t.kind == _FLOPS:
            flops += 2.0 * local * t.trips
            continue
        if t.kind == _SAVED:
            saved += local * item * t.trips
            continue
        if t.kind in (_BROADCAST, _SCATTER):  # the cotangent of the operand's block
            add(bwd, "all-reduce" if t.kind == _BROADCAST else "reduce-scatter", t.axes, local * item, t.trips)
            continue
        if t.kind == _REGATHER:  # the gathered block again, from its saved local block
            add(bwd, "all-gather", t.axes, local * item // math.prod(mesh[a] for a in t.axes), t.trips)
            continue
        c = collective(t.kind)
        before = sum(comm.values())
        add(fwd, c.hlo, t.axes, local * item, t.instructions * t.trips)  # type: ignore[arg-type]
        forward_comm += sum(comm.values()) - before
        if t.kind == "all_gather":
            gathered = max(gathered, local * item * math.prod(mesh[a] for a in t.axes))
        back = _transpose(t.kind)
        if back is not None:  # the transpose's operand: what the forward returned
            p = math.prod(mesh[a] for a in t.axes)
            add(bwd, back, t.axes, _returned(c.hlo, local * item, p), t.backward_trips)  # type: ignore[arg-type]
    params = sum(_local(problem, mesh, layout.dims, layout.axes) for _, layout, is_param in planned.leaves
                 if is_param) * item
    inputs = sum(_local(problem, mesh, layout.dims, layout.axes) for _, layout, is_param in planned.leaves
                 if not is_param) * item
    saved += sum(_local(problem, mesh, v.dims, v.axes) for v in planned.values) * item
    memory = {"parameters": params, "gradients": params, "optimizer": 2 * params if problem.optimizer == "adam" else 0,
              "inputs": inputs, "activations": saved, "gathered": gathered}
    flops *= 3  # forward + backward (twice the forward)
    compute = flops / problem.machine.flops
    total = compute + sum(comm.values())
    parts = {"compute": compute, **{f"communication over {k}": v for k, v in comm.items()}}
    dominant = max(parts, key=lambda k: (parts[k], k))
    return Candidate(mesh, planned.rules, fwd, bwd, memory, flops, compute, comm, total, dominant,
                     sum(memory.values()) <= problem.memory, compute / 3 + forward_comm, planned.structure)


# -- --apply --------------------------------------------------------------------------------------


def apply_mesh(source: bytes, path: str, choices: dict[str, Candidate]) -> bytes:
    """``source`` with each named function's ``@mesh(...)`` replaced by its candidate's (libcst: every
    other byte kept).  Keyword arguments other than the axes and ``rules`` (``dims=``) are kept."""
    ctx = parse_context(source, path)
    targets: dict[cst.Decorator, cst.Decorator] = {}
    for fn, decorator in mesh_functions(ctx):
        choice = choices.get(fn.name.value)
        if choice is None:
            continue
        mesh, _rules = read_mesh_decorator(ctx, decorator)
        call = decorator.decorator
        assert isinstance(call, cst.Call)  # read_mesh_decorator refuses anything else
        kept = [ctx.code(a).rstrip().rstrip(",").strip() for a in call.args
                if a.keyword is not None and a.keyword.value not in (*mesh.names, "rules")]
        new = choice.decorator[len("@mesh("):-1]
        text = f"{ctx.code(call.func)}({', '.join([new, *kept])})"
        targets[decorator] = decorator.with_changes(decorator=cst.parse_expression(text))

    class _Replace(cst.CSTTransformer):
        def leave_Decorator(self, original: cst.Decorator, updated: cst.Decorator) -> cst.Decorator:
            return targets.get(original, updated)

    module = ctx.module.visit(_Replace())
    out = module.bytes
    check = parse_context(out, path)  # the result must read back as the chosen meshes
    for fn, decorator in mesh_functions(check):
        choice = choices.get(fn.name.value)
        if choice is not None:
            mesh, _rules = read_mesh_decorator(check, decorator)
            if dict(zip(mesh.names, mesh.sizes)) != choice.mesh:
                raise SourceError(f"{path}: rewriting @mesh of {fn.name.value} did not read back",
                                  fix="report this as a meshify bug")
    return out


def write_atomically(path: str, data: bytes) -> None:
    """``data`` into a new file beside ``path`` with its mode, then renamed over it (never half-written)."""
    folder = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(folder, f".meshify-{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise SourceError(f"{path}: cannot write ({e.strerror or e}); the file is unchanged",
                          fix="check that its folder is writable") from None


# -- --measure ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Measured:
    """One candidate compiled and run on the devices present (forward pass)."""

    decorator: str
    predicted_s: float
    measured_s: float
    predicted_bytes: int
    compiled_bytes: int


def measure(path: str, source: bytes, search: FunctionSearch, sizes: dict[str, int], k: int,
            repeats: int = 5) -> list[Measured]:
    """Compiles the top ``k`` candidates of ``search`` (each written into a copy of the file) and times
    their forward pass on the devices present: median of ``repeats`` runs after a warm-up.  Imports and
    runs the file, as ``meshify verify`` does."""
    import sys
    import tempfile
    import time
    from pathlib import Path

    from meshify.verify import _build, _call_args, _draw, _import, _predict, _simulate

    _simulate(search.devices)
    import jax

    from meshify.runtime.hlo import collectives, summarize

    if jax.device_count() < search.devices:
        raise MeshifyError(f"--measure needs {search.devices} devices; {jax.device_count()} are present",
                           code="MSH070", fix=f"run plan --measure with --devices {jax.device_count()}, or "
                           "start it in a fresh process (meshify simulates the CPU devices it needs)")
    folder = str(Path(path).resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, candidate in enumerate(search.candidates[:k]):
            text = apply_mesh(source, path, {search.name: candidate})
            copy = Path(tmp) / f"plan_candidate_{i}.py"
            copy.write_bytes(text)
            (report, hints), = _predict(text, copy, sizes, search.name, {})
            module = _import(copy, f"_meshify_plan_{i}_{secrets.token_hex(4)}")
            leaves = _draw(report, hints, 0, sizes)
            arrays = {name: _build(module, name, struct, leaves, sizes) for name, struct in report.structure.items()}
            program = getattr(module, search.name)
            args, kwargs = _call_args(program.reference, arrays)
            try:
                jax.block_until_ready(program(*args, **kwargs))
                times = []
                for _ in range(repeats):
                    start = time.perf_counter()
                    jax.block_until_ready(program(*args, **kwargs))
                    times.append(time.perf_counter() - start)
                hlo = program.lower(*args, **kwargs).compile().as_text()
            except Exception as e:  # noqa: BLE001 - a candidate the runtime refuses is reported, not a crash
                raise MeshifyError(f"{candidate.decorator} failed on the devices present: {type(e).__name__}: "
                                   f"{str(e).splitlines()[0] if str(e) else ''}", code="MSH071",
                                   fix="check --dims; report this as a meshify bug if they are right") from None
            compiled = sum(size for _count, size in summarize(collectives(hlo)).values())
            # As the HLO text shows them: a scan body's collectives once (explain's hlo_bytes).
            predicted = sum(size for _count, size in report.predicted().values())
            out.append(Measured(candidate.decorator, candidate.forward_s, sorted(times)[len(times) // 2],
                                predicted, compiled))
    return out
