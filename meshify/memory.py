"""Per-device memory of one training step, predicted from the traced program (nothing compiled).

What it predicts is what XLA's ``compiled.memory_analysis()`` calls argument + temporary bytes
for the step ``jax.jit`` would compile: the arguments (parameters, inputs, optimizer state)
stay resident for the whole call; temporaries are the largest set of intermediate buffers
alive at one time.  Outputs (a step's new parameters and state, or ``none``'s gradients) are
XLA's output bytes and are not part of either.

How.  The step (``jax.value_and_grad`` of the loss, then an elementwise adam or sgd update, or
no update) is traced with ``jax.make_jaxpr``: the sharded function's ``jax.shard_map`` bodies
appear with their local (per-device) shapes, which is what each device allocates.  The traced
program is flattened (``shard_map``, ``pjit``, custom derivative and remat calls inlined; a
``scan``/``while``/``cond`` is one step whose body's own peak is added while it runs) and
walked once in program order, as XLA's buffer assignment does, with XLA's fusion in mind:

- an elementwise or layout operation (``add``, ``tanh``, ``broadcast_in_dim``, ``reshape``,
  ``pvary``, ...) is fused into its consumers and allocates nothing, unless a consumer is not
  fusible (a contraction, reduction, collective, gather, loop), it is a result of the step, or it
  is an expensive operation (``exp``, ``tanh``, ...) with several consumers, which XLA computes
  once rather than duplicating into each of them;
- everything else writes a buffer; a buffer lives from the operation that writes it to the last
  operation that reads it, directly or through fused operations (a fused ``tanh(x)`` read in the
  backward pass keeps ``x`` alive until then).

Activations saved for the backward pass are the buffers written by the forward pass that the
backward pass reads: the residuals of ``jax.vjp``, each counted through the same fusion model
(a residual that XLA recomputes by fusion counts as the buffer it is computed from).  Gradients
are buffers the size of the parameters; under an optimizer they are temporaries that the update
reads, under ``none`` they are the step's outputs.  An elementwise step that reads a temporary for
the last time as it writes a result of the same size writes it in place (XLA shares the buffer:
adam writes a new moment where its gradient was), so that temporary costs nothing more.

XLA:CPU's matmul reads some operands only after copying them: an operand whose batch dims do not
lead, and the second operand of a product over both operands' leading dims (a weight's gradient
``x^T dy``); each such copy is counted while its contraction runs.  (GPU matmuls read transposed
operands in place: there this over-counts.)

XLA:CPU's reductions (YNNPACK fusions) fuse the elementwise steps that read arrays of their own
shape but take no broadcast of an array: ``x - mean`` or ``x * rsqrt(var)`` read by a reduction is
written to a buffer first (a bias added to a contraction's result is fused into the contraction).
An elementwise value of rank 3 or more that contractions and elementwise steps both read is
written twice while both read it: a 2-D block for the matmuls and the value itself.

XLA:CPU's all-reduce combiner merges all-reduces of one kind, axes and dtype that do not depend
on each other into one, run where the last of them is (a step's gradient sums become one
all-reduce at its end): each partial sum lives until then.  A buffer of a constant (the zeros a
gather's gradient is scattered into) is written at the start of the program, and a gradient
added to such a scatter is scattered into in place (``a + scatter_add(zeros, ...)`` becomes
``scatter_add(a, ...)``).  A weight's gradient and the contraction beside it that reads the same
cotangent run with the copy made for the weight's alive during both.

XLA's buffer assignment also places a temporary in a result's buffer that is not yet written
when the temporary's life ends before the result's write (largest temporaries first, each into
the smallest such result buffer at least its size): under adam or sgd the new parameters and
moments, written by the update at the end of the step, hold most of the step's activations and
gradients (XLA's temporaries then shrink to kilobytes), and under ``none`` the gradients a
combined all-reduce writes at the end of the step hold what is dead by then.

Limits (measured with ``benchmarks/memory_predict.py``; its results JSON has every case under
``none`` and adam): XLA packs buffers of different sizes into one heap, leaving gaps (about 4% on
a Transformer block); a ``scan`` is one step whose body's peak is added while it runs, so that
buffers XLA reuses across a loop's iterations and its stacked residuals are approximate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Literal

from meshify.verify import _build, _call_args, _import, _item_paths

if TYPE_CHECKING:
    from meshify.explain import ArgReport, FunctionReport

__all__ = ["FLOATS", "OPTIMIZERS", "MemoryReport", "UnknownBatchDim", "loss_of", "predict_file", "predict_step"]

#: ``--optimizer`` choices: adam keeps two moments per parameter (in its dtype, as optax's adam), sgd none.
OPTIMIZERS = ("adam", "sgd", "none")

#: ``--itemsize``: the float dtype explain's arrays get (integers stay int32, keys keys).
FLOATS = {2: jnp.bfloat16, 4: jnp.float32}

def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Operations XLA fuses into their consumers (elementwise, broadcasts, reshapes, layout no-ops).
_FUSIBLE = _words("""
    abs acos acosh add add_any and asin asinh atan atan2 atanh bitcast_convert_type broadcast_in_dim
    cbrt ceil clamp conj convert_element_type copy copy_p cos cosh div eq erf erf_inv erfc exp exp2
    expm1 expand_dims floor ge gt imag integer_pow iota is_finite le lgamma digamma log log1p logistic
    lt max min mul ne neg nextafter not or pjit_identity population_count pow pvary real reduce_precision
    rem reshape round rsqrt select_n shift_left shift_right_arithmetic shift_right_logical sign sin
    sinh sqrt square squeeze stop_gradient sub tan tanh xor random_wrap random_unwrap threefry2x32
    random_bits random_seed random_fold_in random_split convert
""")

#: Operations that only retype, reshape or transpose their operand: the result is the operand's
#: buffer (XLA's layout assignment folds a transpose into the operation that writes or reads it).
_ALIASES = _words("pvary reshape squeeze expand_dims reshard bitcast_convert_type transpose")

#: Operations that write a buffer of their own but compute their operands in place (XLA's reduce
#: fusions): an elementwise operand read only by them allocates nothing.
_REDUCTIONS = _words("reduce_sum reduce_max reduce_min reduce_prod reduce_and reduce_or argmax argmin")

#: Fusible operations XLA computes once instead of duplicating into several consumers.
_EXPENSIVE = _words("""
    acos acosh asin asinh atan atan2 atanh cbrt cos cosh div erf erf_inv erfc exp exp2 expm1 lgamma
    digamma log log1p logistic pow rem rsqrt sin sinh sqrt tan tanh threefry2x32 random_bits
""")

#: Calls whose body runs in place, as part of the program that calls them.
_INLINED = {"jit": "jaxpr", "pjit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr", "remat": "jaxpr",
            "remat2": "jaxpr", "checkpoint": "jaxpr", "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr",
            "custom_vjp_call_jaxpr": "fun_jaxpr", "shard_map": "jaxpr"}


@dataclass(frozen=True, slots=True)
class MemoryReport:
    """Bytes per device of one training step; ``peak`` is XLA's argument + temporary bytes."""

    optimizer: str
    parameters: int  # the differentiated arguments' local blocks
    gradients: int  # one per parameter, the same size
    optimizer_state: int  # adam: two moments per parameter, in its dtype; sgd and none: 0
    inputs: int  # the other arguments (tokens, batches, keys)
    activations: int  # buffers the forward pass writes and the backward pass reads
    temporaries: int  # the largest set of intermediate buffers alive at one time

    @property
    def arguments(self) -> int:
        return self.parameters + self.optimizer_state + self.inputs

    @property
    def peak(self) -> int:
        return self.arguments + self.temporaries

    def to_json(self) -> dict:
        return {**asdict(self), "arguments": self.arguments, "peak": self.peak}


@dataclass(eq=False)
class _Value:
    """One array of the flattened program, at its local (per-device) size."""

    bytes: int
    primitive: str = ""  # the operation that wrote it ("" for an argument)
    operands: tuple[_Value, ...] = ()
    arg: bool = False
    out: bool = False
    fusible: bool = False
    consumers: list[int] = field(default_factory=list)  # the steps that read it
    rank: int = 0


@dataclass(frozen=True, slots=True)
class _Step:
    ins: tuple[_Value, ...]
    outs: tuple[_Value, ...]
    fusible: bool  # reads fused operands in place (an elementwise operation or a reduction)
    transient: int = 0  # a loop: its body's own peak, alive while the step runs
    copied: tuple[_Value, ...] = ()  # a contraction: the operands XLA:CPU copies before it runs
    reduction: tuple = ()  # an all-reduce: what XLA's combiner groups it by (primitive, axes, dtype)


def _itemsize(dtype: Any) -> int:
    return dtype.itemsize if jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key) else np.dtype(dtype).itemsize


def _nbytes(aval: Any) -> int:
    return math.prod(aval.shape) * _itemsize(aval.dtype)


class _Flattener:
    """A traced program as one list of steps in program order, each variable bound to a
    :class:`_Value` and a ``factor``: outside ``shard_map`` arrays are global, and the factor says
    into how many pieces their sharding cuts them (from the arguments' shardings and
    ``shard_map``'s specs), so that a local size is the global size divided by it."""

    def __init__(self) -> None:
        self.steps: list[_Step] = []
        self.env: dict[Any, tuple[_Value, int]] = {}
        self.dots: dict[_Value, tuple[int, Any, list[_Value]]] = {}  # a contraction's result: its step

    def read(self, atom: Any) -> tuple[_Value, int] | None:
        return None if isinstance(atom, Literal) else self.env.get(atom)

    def arguments(self, invars: Sequence[Any], factors: Sequence[int]) -> None:
        for var, factor in zip(invars, factors, strict=True):
            self.env[var] = (_Value(_nbytes(var.aval) // factor, arg=True, rank=len(var.aval.shape)), factor)

    def results(self, outvars: Sequence[Any]) -> None:
        """Marks the program's results (XLA's output bytes, never temporaries)."""
        for found in map(self.read, outvars):
            if found is not None:
                found[0].out = True

    def run(self, eqns: Sequence[Any]) -> None:
        for eqn in eqns:
            name = eqn.primitive.name
            if _INLINED.get(name) in eqn.params:
                self.inline(eqn, eqn.params[_INLINED[name]])
            else:
                self.operation(eqn, name)

    def operation(self, eqn: Any, name: str) -> None:
        ins = [(atom, found) for atom in eqn.invars if (found := self.read(atom)) is not None]
        if name == "transpose" and len(ins) == 1 and ins[0][1][0] in self.dots:
            self._transposed(ins[0][1][0], eqn.params["permutation"])
        if name in _ALIASES and len(ins) == 1 and ins[0][1][0].bytes * ins[0][1][1] == _nbytes(eqn.outvars[0].aval):
            self.env[eqn.outvars[0]] = ins[0][1]
            return
        fusible = name in _FUSIBLE
        operands = tuple(value for _, (value, _) in ins)
        outs = []
        for var in eqn.outvars:
            # Outside shard_map XLA's partitioner splits a result like its split operand of the same shape.
            factor = max((f for atom, (_, f) in ins if atom.aval.shape == var.aval.shape), default=1)
            outs.append(_Value(_nbytes(var.aval) // factor, name, operands, fusible=fusible, rank=len(var.aval.shape)))
            self.env[var] = (outs[-1], factor)
        copied = _dot_copies(eqn, [v for _, (v, _) in ins]) if name == "dot_general" else ()
        if name == "dot_general":
            self.dots[outs[0]] = (len(self.steps), eqn, [v for _, (v, _) in ins])
        reduction = (name, eqn.params.get("axes"), str(eqn.outvars[0].aval.dtype)) if name in _ALL_REDUCES else ()
        self.steps.append(_Step(operands, tuple(outs), fusible or name in _REDUCTIONS, _loop_peak(eqn), copied,
                                reduction))

    def _transposed(self, result: _Value, permutation: Sequence[int]) -> None:
        """A contraction whose result is transposed, rhs dims first: XLA computes the transposed
        product (operands swapped), so the operand its matmul copies is the other one."""
        index, eqn, operands = self.dots[result]
        _, (lhs_b, _) = eqn.params["dimension_numbers"]
        if lhs_b or not permutation or permutation[0] == 0 or len(operands) != 2:
            return
        step = self.steps[index]
        self.steps[index] = replace(step, copied=_dot_copies(eqn, operands, swapped=True))

    def inline(self, eqn: Any, body: Any) -> None:
        """A call's body in place; inside ``shard_map`` shapes are already local (factor 1)."""
        jaxpr, manual = getattr(body, "jaxpr", body), eqn.primitive.name == "shard_map"
        for constvar, const in zip(jaxpr.constvars, getattr(body, "consts", ()), strict=False):
            self.env[constvar] = (_Value(int(np.asarray(const).nbytes), arg=True), 1)
        for inner, atom in zip(jaxpr.invars, eqn.invars, strict=True):
            if (found := self.read(atom)) is not None:
                self.env[inner] = (found[0], 1 if manual else found[1])
        self.run(jaxpr.eqns)
        for var, inner in zip(eqn.outvars, jaxpr.outvars, strict=True):
            value, factor = self.read(inner) or (_Value(_nbytes(var.aval), "literal"), 1)
            self.env[var] = (value, max(1, _nbytes(var.aval) // max(1, value.bytes)) if manual else factor)


def _dot_copies(eqn: Any, operands: Sequence[_Value], swapped: bool = False) -> tuple[_Value, ...]:
    """The operand copies XLA:CPU makes for a contraction its matmul cannot read in place: an
    operand whose batch dims do not lead (attention's ``bqhk,bshk->bhqs``), and the second operand
    of a product contracting both operands' leading dims (a weight's gradient, ``x^T dy``; the
    first when the product is computed ``swapped``, its result transposed)."""
    (lhs_c, rhs_c), (lhs_b, rhs_b) = eqn.params["dimension_numbers"]
    copies = [tuple(b) != tuple(range(len(b))) for b in (lhs_b, rhs_b)]
    leading = not lhs_b and tuple(lhs_c) == tuple(range(len(lhs_c))) == tuple(rhs_c)
    copies[0 if swapped else 1] = copies[0 if swapped else 1] or leading
    return tuple(value for value, copied in zip(operands, copies, strict=False) if copied)


def _scan_carried(params: dict[str, Any]) -> int:
    """A scan's consts and carry, which its body receives whole (its ``xs`` come a slice a step):
    ``num_consts + num_carry`` (jax 0.10), or the first two parts of its ``ft_in`` (jax 0.11)."""
    if "num_consts" in params:
        return params["num_consts"] + params["num_carry"]
    consts, carry, _ = params["ft_in"].unpack()
    return len(consts) + len(carry)


def _loop_peak(eqn: Any) -> int:
    """The temporaries a ``scan``/``while``/``cond`` body holds while it runs (its largest branch):
    its own peak, with a scan's slices of the arrays it scans over (one step's ``xs``) as fusible
    values written at the body's start: XLA copies a slice out only for a consumer it cannot fuse
    into (a contraction, a collective), and keeps it until that consumer's last read; its carry
    and results are the loop's own buffers, counted outside."""
    bodies = [eqn.params[k] for k in ("jaxpr", "body_jaxpr") if k in eqn.params]
    bodies += list(eqn.params.get("branches", ()))
    peaks = [0]
    for body in bodies:
        jaxpr = getattr(body, "jaxpr", body)
        carried = _scan_carried(eqn.params) if eqn.primitive.name == "scan" else len(jaxpr.invars)
        flat = _Flattener()
        flat.arguments(jaxpr.invars[:carried], [1] * carried)
        slices = tuple(_Value(_nbytes(v.aval), "dynamic_slice", fusible=True) for v in jaxpr.invars[carried:])
        flat.env.update((var, (value, 1)) for var, value in zip(jaxpr.invars[carried:], slices, strict=True))
        flat.steps.append(_Step((), slices, True))
        flat.run(jaxpr.eqns)
        flat.results(jaxpr.outvars)
        peaks.append(_Liveness(flat.steps).peak())
    return max(peaks)


#: All-reduces, which XLA's combiner merges when neither depends on the other.
_ALL_REDUCES = _words("psum psum_invariant psum2 pmax pmin")

#: Operations XLA runs in place on their first operand's buffer (when nothing reads it later).
_UPDATED_IN_PLACE = frozenset({"scatter-add", "scatter_add", "scatter", "scatter-mul", "scatter_mul",
                               "dynamic_update_slice"})


def _siblings_first(steps: Sequence[_Step]) -> list[_Step]:
    """A weight's gradient (a contraction that copies an operand first, ``x^T dy``) and the
    contraction beside it that reads the same operand (``dy W^T``): XLA:CPU makes the copy, runs the
    other contraction, then the weight's, so the copy is alive during both."""
    steps = list(steps)
    for i in range(len(steps) - 1):
        first, second = steps[i], steps[i + 1]
        if first.copied and second.outs and second.outs[0].primitive == "dot_general" and not second.copied \
                and set(first.copied) & set(second.ins) and not set(first.outs) & set(second.ins):
            steps[i], steps[i + 1] = replace(second, copied=first.copied), first
    return steps


def _broadcasts(value: _Value) -> bool:
    """An elementwise value computed from a broadcast of an array (``x - mean``, ``x * rsqrt(var)``),
    not of a number."""
    if value.primitive in _ALIASES or value.primitive == "broadcast_in_dim" \
            or any(o.primitive == "dot_general" for o in value.operands):
        return False  # (a bias added to a contraction's result is fused into the contraction)
    return any(o.primitive == "broadcast_in_dim" and o.operands and o.operands[0].rank >= 1 and o.operands[0].bytes > 8
               or o.rank >= 1 and 8 < o.bytes < value.bytes for o in value.operands)  # (lax broadcasts size-1 dims)


def _zeros(value: _Value) -> bool:
    """A broadcast of a constant (``jnp.zeros_like``: the base a gather's gradient is scattered into)."""
    return value.primitive == "broadcast_in_dim" and not value.operands


class _Liveness:
    """Which values get a buffer (the fusion model in the module docstring), and when each lives."""

    def __init__(self, steps: Sequence[_Step], updated: bool = False) -> None:
        self.steps = steps = _siblings_first(steps)
        for i, step in enumerate(steps):
            for value in step.ins:
                value.consumers.append(i)
        self._roots: dict[_Value, frozenset[_Value]] = {}
        self._feeds: dict[_Value, bool] = {}
        self.born: dict[_Value, int] = {}
        self.last: dict[_Value, int] = {}
        self.fused_last: dict[_Value, int] = {}  # the last elementwise step or reduction reading it
        self.dot_last: dict[_Value, int] = {}  # the last contraction reading it
        for i, step in enumerate(steps):
            written = [v for v in step.outs if self.buffered(v)]
            for value in written:
                # A buffer of a constant (the zeros a gather's gradient is scattered into) depends on
                # nothing: XLA's scheduler writes it at the start of the program.
                self.born[value], self.last[value] = (0 if _zeros(value) else i), i
            if written:  # a fused step reads nothing itself: the step it is fused into does
                for value in step.ins:
                    for root in self.roots(value):
                        self.last[root] = i
                        if step.fusible:
                            self.fused_last[root] = i
                        elif written[0].primitive == "dot_general":
                            self.dot_last[root] = i
        self.combined: set[_Value] = set()  # results written by a combined all-reduce
        self.reduced: set[_Value] = set()  # and the buffers it reads
        self._combined()
        self._updated_in_place()
        self.shared = self._shared()
        self.housed = self._in_place()
        self.housed |= self._in_results(updated)

    def _combined(self) -> None:
        """XLA's all-reduce combiner merges all-reduces of the same kind, axes and dtype that do not
        depend on each other into one, run where the last of them is: a gradient's partial sum waits
        for the other gradients' (in program order, each joins the group before it unless it depends
        on one of its members).  Each member's operand then lives until the group runs."""
        producer = {v: i for i, step in enumerate(self.steps) for v in step.outs}
        after: list[frozenset[int]] = []  # the all-reduce steps each step depends on
        groups: dict[tuple, list[int]] = {}
        closed: list[list[int]] = []
        for i, step in enumerate(self.steps):
            needs = frozenset().union(*(after[producer[v]] for v in step.ins if v in producer))
            if step.reduction:
                group = groups.setdefault(step.reduction, [])
                if needs & set(group):
                    closed.append(group)
                    group = groups[step.reduction] = []
                group.append(i)
                needs |= {i}
            after.append(needs)
        for group in [*closed, *groups.values()]:
            end = group[-1]
            for i in group[:-1]:
                for value in self.steps[i].ins:
                    for root in self.roots(value):
                        if not root.arg:
                            self.last[root] = max(self.last[root], end)
                for value in self.steps[i].outs:
                    if value in self.born and all(c >= end for c in value.consumers):
                        self.born[value] = end
                        self.last[value] = max(self.last[value], end)
            if len(group) > 1:
                self.combined.update(v for i in group for v in self.steps[i].outs)
                for value in (r for i in group for v in self.steps[i].ins for r in self.roots(v)):
                    self.reduced.add(value)
                    if value.primitive in _UPDATED_IN_PLACE:  # and the buffer it was updated in
                        self.reduced.update(self.roots(value.operands[0]))

    def _updated_in_place(self) -> None:
        """A scatter (or dynamic_update_slice) writes its result into its operand's buffer when that
        operand is a temporary read for the last time there (XLA updates it in place: the gradient of a
        gather, ``zeros.at[ids].add(g)``, costs one buffer, not two): the operand dies as the step begins."""
        for i, step in enumerate(self.steps):
            if not step.outs or not step.ins or step.outs[0].primitive not in _UPDATED_IN_PLACE:
                continue
            result = step.outs[0]
            if result.out:
                continue  # the operand lives on in the result's own buffer (_in_place)
            for root in self.roots(step.ins[0]):
                if not root.arg and not root.out and self.last.get(root) == i and self.born.get(root, i) < i \
                        and root.bytes == result.bytes:
                    self.last[root] = i - 1
                    break

    def _shared(self) -> set[_Value]:
        """Sums written into a scatter's buffer: XLA's simplifier turns ``a + scatter_add(zeros, i, u)``
        (the gradient of a gather added to another gradient) into ``scatter_add(a, i, u)``, updated in
        place, so the sum costs nothing more, the zeros are never written, and the scatter's buffer
        lives on until the sum's last read."""
        home: dict[_Value, _Value] = {}
        zeros: set[_Value] = set()
        for i, step in enumerate(self.steps):
            for value in step.outs:
                if value.primitive not in ("add", "add_any") or value.out or self.born.get(value) != i:
                    continue
                donor = next((r for v in step.ins for r in self.roots(v)
                              if r.primitive in _UPDATED_IN_PLACE and not r.out and set(r.consumers) == {i}
                              and r.bytes == value.bytes and _zeros(r.operands[0])), None)
                if donor is not None:
                    home[value] = home.get(donor, donor)
                    zeros.add(donor.operands[0])
        for value, buffer in home.items():
            self.last[buffer] = max(self.last[buffer], self.last[value])
        return set(home) | zeros

    def _in_place(self) -> set[_Value]:
        """Temporaries that live on in a result's buffer (in place: see the module docstring)."""
        housed: set[_Value] = set()
        for result in (v for v in self.born if v.out and not v.arg):
            step = self.born[result]
            ins = self.steps[step].ins
            if result.primitive in _UPDATED_IN_PLACE:  # a scatter into zeros, written where the result goes
                ins = ins[:1]
            elif not self.steps[step].fusible:
                continue
            housed.update([r for v in ins for r in self.roots(v)
                           if self.last.get(r) == step and r.bytes == result.bytes
                           and not r.out and not r.arg and r not in housed][:1])
        return housed

    def _in_results(self, updated: bool) -> set[_Value]:
        """Temporaries XLA's buffer assignment places in a result's buffer before the result is
        written: largest first, each into the smallest result buffer at least its size that holds
        nothing else during its life (a result lives from its write to the end of the step).  The
        results that take them (measured on XLA:CPU): those a combined all-reduce writes at the end
        of the step (``none``'s gradients), though never its own operands; and in a step with an
        update (``updated``), those an elementwise step writes, unless they hold a temporary
        written in place (adam's new parameter that took the gradient's buffer), from when that
        temporary is written if a combined all-reduce writes it (sgd's new parameter over its
        summed gradient)."""
        results = sorted((v for v in self.born if v.out and not v.arg), key=lambda v: v.bytes)
        written = {r: self.born[r] for r in results}  # when each result's buffer is first written
        holding: set[_Value] = set()
        for value in self.housed:  # the result each in-place temporary lives on in
            match = next((r for r in results if r not in holding and r.bytes == value.bytes
                          and self.born[r] == self.last[value]), None)
            if match is not None:
                holding.add(match)
                written[match] = self.born[value] if updated and value in self.combined else -1
        results = [r for r in results if written[r] >= 0 and (
            r in self.combined or r in holding or updated and self.steps[self.born[r]].fusible)]
        used: dict[_Value, list[tuple[int, int]]] = {r: [(written[r], len(self.steps))] for r in results}
        placed: set[_Value] = set()
        for value in sorted(self.temporaries(), key=lambda v: -v.bytes):
            if value in self.housed or value in self.shared:
                continue
            start, end = self.born[value], self.last[value]
            for result in results:
                if value in self.reduced and (result in self.combined or result in holding):
                    continue  # an all-reduce's operand is not written into its results
                if result.bytes >= value.bytes and all(end < a or start > b for a, b in used[result]):
                    used[result].append((start, end))
                    placed.add(value)
                    break
        return placed

    def buffered(self, value: _Value) -> bool:
        if value.arg or value.out:
            return True
        if not value.consumers:
            return False  # dead code: XLA removes it
        if not value.fusible or any(not self.steps[i].fusible for i in value.consumers):
            return True
        if _broadcasts(value) and self._feeds_reduction(value):
            return True  # XLA:CPU's reductions (YNNPACK fusions) take no broadcast of an array
        return value.primitive in _EXPENSIVE and len(set(value.consumers)) > 1

    def _feeds_reduction(self, value: _Value) -> bool:
        """Whether a reduction reads ``value`` through elementwise steps fused into it."""
        if value not in self._feeds:
            self._feeds[value] = False  # (no cycles in a program; this only guards the recursion)
            outs = [self.steps[i].outs[0] for i in value.consumers if self.steps[i].outs]
            self._feeds[value] = any(o.primitive in _REDUCTIONS or o.fusible and self._feeds_reduction(o) for o in outs)
        return self._feeds[value]

    def roots(self, value: _Value) -> frozenset[_Value]:
        """The buffers a value is computed from (itself, when it has one)."""
        if value not in self._roots:
            self._roots[value] = frozenset([value]) if self.buffered(value) else \
                frozenset().union(*(self.roots(v) for v in value.operands))
        return self._roots[value]

    def temporaries(self) -> list[_Value]:
        return [v for v in self.born if not v.arg and not v.out]

    def live(self) -> list[int]:
        """Temporary bytes alive at each step."""
        delta = [0] * (len(self.steps) + 1)
        for value in self.temporaries():
            if value in self.housed or value in self.shared:
                continue
            delta[self.born[value]] += value.bytes
            delta[self.last[value] + 1] -= value.bytes
        for value, end in self.twice().items():
            delta[self.born[value]] += value.bytes
            delta[end + 1] -= value.bytes
        return list(np.cumsum(delta[:-1])) if self.steps else []

    def twice(self) -> dict[_Value, int]:
        """Values XLA:CPU writes twice, with the step the second copy lives to: an elementwise value of
        rank 3 or more that contractions read (flattened to a 2-D block in the matmul's fusion) and
        elementwise steps or reductions read too (in its own shape, in theirs)."""
        return {v: min(self.dot_last[v], self.fused_last[v]) for v in self.born
                if v.fusible and v.rank >= 3 and not v.arg and not v.out and v in self.dot_last and v in self.fused_last
                and v not in self.housed and v not in self.shared}

    def peak(self) -> int:
        return int(max((alive + step.transient + sum(v.bytes for v in step.copied)
                        for alive, step in zip(self.live(), self.steps)), default=0))

    def crossing(self, boundary: int) -> int:
        """Bytes of the temporaries written before step ``boundary`` and read at or after it."""
        return sum(v.bytes for v in self.temporaries()
                   if v not in self.shared and self.born[v] < boundary <= self.last[v])


# -- the step ---------------------------------------------------------------------------------------


def loss_of(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The loss a step differentiates, as ``benchmarks/run.py`` defines it: the first array the
    function returns if it is a scalar, else the mean of its squares."""
    def loss(*args: Any) -> Any:
        out = jax.tree.leaves(fn(*args))[0]
        return out if out.ndim == 0 else jnp.mean(jnp.square(out))

    return loss


def _update(optimizer: str, params: Any, grads: Any, state: tuple) -> Any:
    """The optimizer's step, elementwise as optax writes it (its constants do not change the bytes)."""
    if optimizer == "none":
        return grads
    if optimizer == "sgd":
        return jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads)
    mu = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, state[0], grads)
    nu = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, state[1], grads)
    return jax.tree.map(lambda p, m, v: p - 1e-3 * m / (jnp.sqrt(v) + 1e-8), params, mu, nu), mu, nu


def _moments(optimizer: str, params: Any) -> tuple:
    """adam's first and second moments: each of its parameter's dtype (optax's ``adam`` with its
    default ``mu_dtype``) and split like it."""
    if optimizer != "adam":
        return ()
    moment = jax.tree.map(lambda p: jax.ShapeDtypeStruct(p.shape, p.dtype, sharding=_sharding(p)), params)
    return moment, moment


def _sharding(leaf: Any) -> Any:
    return getattr(leaf, "sharding", None)


def _local_bytes(leaf: Any) -> int:
    sharding = _sharding(leaf)
    shape = sharding.shard_shape(leaf.shape) if sharding is not None else leaf.shape
    return math.prod(shape) * _itemsize(leaf.dtype)


def _factor(leaf: Any) -> int:
    return max(1, math.prod(leaf.shape) * _itemsize(leaf.dtype) // max(1, _local_bytes(leaf)))


def predict_step(loss: Callable[..., Any], args: Sequence[Any], argnums: Sequence[int],
                 optimizer: str = "none") -> MemoryReport:
    """Predicts the per-device memory of one training step of ``loss`` (see the module docstring).

    Args:
        loss: returns a scalar; may call ``@mesh`` functions (their ``shard_map`` bodies are read).
        args: its arguments: arrays or ``jax.ShapeDtypeStruct`` (pytrees of them), each with the
            sharding it has on the mesh (none: replicated).
        argnums: the arguments differentiated (the parameters).
        optimizer: ``adam``, ``sgd`` or ``none`` (the step returns the gradients).
    """
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer {optimizer!r}: choose one of {', '.join(OPTIMIZERS)}")
    params = tuple(args[i] for i in argnums)
    others = tuple(a for i, a in enumerate(args) if i not in argnums)

    def call(diff: tuple, rest: tuple) -> Any:
        d, r = iter(diff), iter(rest)
        return loss(*(next(d) if i in argnums else next(r) for i in range(len(args))))

    def forward(diff: tuple, state: tuple, rest: tuple) -> Any:
        return jax.vjp(lambda *d: call(d, rest), *diff)

    def step(diff: tuple, state: tuple, rest: tuple) -> Any:
        value, backward = forward(diff, state, rest)
        return value, _update(optimizer, diff, backward(jnp.ones_like(value)), state)

    inputs = (params, _moments(optimizer, params), others)
    traced = jax.make_jaxpr(step)(*inputs)
    forward_pass = [e.primitive for e in jax.make_jaxpr(lambda *a: forward(*a)[0])(*inputs).eqns]
    if forward_pass != [e.primitive for e in traced.eqns[:len(forward_pass)]]:
        raise RuntimeError("the traced step does not begin with its forward pass; report this as a meshify bug")
    liveness, boundary = _simulate(traced, jax.tree.leaves(inputs), len(forward_pass), optimizer != "none")
    sizes = [sum(_local_bytes(leaf) for leaf in jax.tree.leaves(part)) for part in inputs]
    return MemoryReport(optimizer, sizes[0], sizes[0], sizes[1], sizes[2], liveness.crossing(boundary),
                        liveness.peak())


def _simulate(traced: Any, leaves: Sequence[Any], forward_eqns: int, updated: bool) -> tuple[_Liveness, int]:
    """The step's liveness, and the index of its first backward step (the forward pass is the
    traced step's first ``forward_eqns`` equations, as ``jax.vjp`` emits them)."""
    flat = _Flattener()
    flat.arguments(traced.jaxpr.invars, [_factor(leaf) for leaf in leaves])
    flat.run(traced.jaxpr.eqns[:forward_eqns])
    boundary = len(flat.steps)
    flat.run(traced.jaxpr.eqns[forward_eqns:])
    flat.results(traced.jaxpr.outvars)
    return _Liveness(flat.steps, updated), boundary


# -- explain --optimizer ----------------------------------------------------------------------------


def predict_file(path: Path, reports: Sequence[FunctionReport], optimizer: str, itemsize: int = 4,
                 batch: Sequence[str] | None = None, sizes: Mapping[str, int] | None = None) -> list[MemoryReport]:
    """Each explained function's training step (``explain --optimizer``).  Unlike the rest of
    explain this imports ``path`` (as ``verify`` does): the step is traced from the function
    itself, its array parameters abstract (nothing allocated) at explain's global shapes and in
    the shardings its ``@mesh`` gives them, its static parameters at their defaults.  Floats get
    ``itemsize`` bytes (``FLOATS``); integers are int32.  The parameters differentiated are the
    arguments holding a float leaf with no batch dim (``batch``; default: the dims whose name
    contains "batch", as ``plan`` has them); the others (data, indices, keys) are inputs.  A
    sequence field (``blocks: tuple[Block, ...]``) gets ``sizes[field]`` items, as ``verify`` draws it."""
    from meshify.runtime import simulate_cpu_devices

    if itemsize not in FLOATS:
        raise ValueError(f"itemsize {itemsize}: a training step's memory is predicted for "
                         + " or ".join(str(i) for i in FLOATS) + "-byte floats")
    simulate_cpu_devices(max(r.devices for r in reports))
    module = _import(path, f"_meshify_memory_{abs(hash(str(path)))}")
    return [_predict_function(module, report, optimizer, FLOATS[itemsize], batch, sizes or {}) for report in reports]


class UnknownBatchDim(ValueError):
    """``predict_file``'s ``batch`` names a dim no argument of the function has."""


def _dims(arg: ArgReport) -> list[str]:
    """The dim names of an argument's layout (``[batch/'data', d_model]`` -> batch, d_model)."""
    inside = arg.layout[1:arg.layout.index("]")]
    return [part.split("/")[0].strip() for part in inside.split(",") if part.strip()]


def _predict_function(module: Any, report: FunctionReport, optimizer: str, floating: Any,
                      batch: Sequence[str] | None, sizes: Mapping[str, int]) -> MemoryReport:
    program = getattr(module, report.name)
    shardings = program.sharded._leaf_shardings()
    leaves = {path: jax.ShapeDtypeStruct(a.global_shape, _dtype(a, floating), sharding=shardings[a.name])
              for a in report.args for path in _item_paths(a.name, sizes)}
    names = list(report.structure)
    values = [_build(module, name, report.structure[name], leaves, sizes) for name in names]
    known = {d for a in report.args for d in _dims(a)}
    unknown = sorted(set(batch or ()) - known)
    if unknown:
        raise UnknownBatchDim(f"batch dim {unknown[0]!r} is no dim of {report.name}'s arguments: choose some of "
                         + ", ".join(sorted(known)))
    batch_dims = set(batch) if batch is not None else {d for d in known if "batch" in d.lower()}
    differentiated = {a.name.split(".")[0] for a in report.args
                      if not (a.integer or a.key) and not set(_dims(a)) & batch_dims}
    argnums = [i for i, name in enumerate(names) if name in differentiated]

    def call(*arrays: Any) -> Any:
        args, kwargs = _call_args(program.reference, dict(zip(names, arrays, strict=True)))
        return program(*args, **kwargs)

    return predict_step(loss_of(call), values, argnums, optimizer)


def _dtype(arg: ArgReport, floating: Any = jnp.float32) -> Any:
    if arg.key:
        return jax.eval_shape(lambda: jax.random.key(0)).dtype
    return jnp.int32 if arg.integer else floating
