"""``explain``: what a layout costs, from the annotations alone (no JAX, no devices).

For each ``@mesh`` function: every argument's local block and how it is tiled over
the mesh, each value a statement binds with its layout and local bytes, each inserted
collective with its kind, axes and bytes per device, and per-function totals.

Bytes per device are what the compiled HLO's collective instruction returns, the
measure ``meshify.runtime.hlo`` counts: an all-reduce (``psum``, ``pmax``) returns its
operand's local block, a reduce-scatter its operand's block divided by the shard count,
an all-gather its operand's block times it, an all-to-all its operand's block.  A
sharded softmax/log_softmax/logsumexp runs two all-reduces of its statistic (max,
sum of exp).  Element sizes come from ``itemsize`` (dtypes are not in the hints), except where the
code says a value's dtype: a comparison's bool (1 byte), an integer parameter's int32 (a jaxtyping
``Int[...]`` hint, or used as indices), a dtype spelled out (``x.astype(jnp.bfloat16)``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field

import libcst as cst

from meshify.annotate._types import BROADCAST, INFERRED, Layout, MeshSpec, literal_size, slice_size, unsliced
from meshify.errors import AnnotationError, LayoutError, MeshifyError, SourceSpan
from meshify.rewrite._collectives import collective
from meshify.rewrite._context import ModuleContext, parse_context
from meshify.rewrite._driver import mesh_functions
from meshify.rewrite._dtypes import DTYPE_BYTES
from meshify.rewrite._hints import hint_dtype, is_integer_hint, read_mesh_decorator, read_mesh_dims
from meshify.rewrite._interp import FunctionPlan, FunctionRewriter, Record
from meshify.rewrite._values import TracedLoop, UnknownLoop

__all__ = ["ArgReport", "CollectiveReport", "FunctionReport", "ValueReport", "explain_source", "parse_dims"]



@dataclass(frozen=True, slots=True)
class ArgReport:
    name: str
    layout: str
    global_shape: tuple[int, ...]
    local_shape: tuple[int, ...]
    bytes: int
    tiling: list[str]
    integer: bool = False  # the hint says integers (jaxtyping's Int[...]) or it is used as an index
    key: bool = False  # used as a jax.random key
    boolean: bool = False  # the hint says booleans (jaxtyping's Bool[...]) or it is used as a mask


@dataclass(frozen=True, slots=True)
class ValueReport:
    line: int
    name: str
    layout: str
    local_shape: tuple[int, ...]  # () with ``sized`` False: a dim meshify inferred has no size known
    bytes: int
    sized: bool = True


@dataclass(frozen=True, slots=True)
class CollectiveReport:
    line: int
    kind: str
    hlo_kind: str
    count: int
    axes: tuple[str, ...]
    dim: str
    bytes: int
    reason: str
    #: Instructions and bytes as the compiled HLO text shows them (a scan body once).
    hlo_count: int = 0
    hlo_bytes: int = 0
    #: The element type on the wire: ``float32`` where float16/bfloat16 partial sums accumulate in
    #: float32 (``itemsize`` 2), ``@mesh(reduce_dtype=...)``'s where set; else the values' own.
    dtype: str = ""


@dataclass(slots=True)
class FunctionReport:
    name: str
    line: int
    mesh: str
    devices: int
    args: list[ArgReport] = field(default_factory=list)
    values: list[ValueReport] = field(default_factory=list)
    #: Top-level array parameters in order; pytree ones map to their class and fields.
    structure: dict = field(default_factory=dict)
    collectives: list[CollectiveReport] = field(default_factory=list)

    @property
    def collective_bytes(self) -> int:
        return sum(c.bytes for c in self.collectives)

    @property
    def parameter_bytes(self) -> int:
        return sum(a.bytes for a in self.args)

    @property
    def activation_bytes(self) -> int:
        return sum(v.bytes for v in self.values)

    def predicted(self) -> dict[str, tuple[int, int]]:
        """HLO collective kind -> (instructions, bytes per device) the compiled HLO text should show.

        A scan or fori_loop body appears once in the text however often it runs; the
        ``collectives`` rows count executions.
        """
        out: dict[str, tuple[int, int]] = {}
        for c in self.collectives:
            count, size = out.get(c.hlo_kind, (0, 0))
            out[c.hlo_kind] = (count + c.hlo_count, size + c.hlo_bytes)
        return out

    def to_json(self) -> dict:
        out = asdict(self)
        out["totals"] = {"collective_bytes_per_device": self.collective_bytes,
                         "parameter_bytes_per_device": self.parameter_bytes,
                         "activation_bytes_per_device": self.activation_bytes}
        return out


def parse_dims(text: str) -> dict[str, int]:
    """``"batch=8,length=1024"`` -> ``{"batch": 8, "length": 1024}``."""
    sizes: dict[str, int] = {}
    for item in text.replace(";", ",").split(","):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier() or not value.strip().isdigit():
            raise AnnotationError(f"--dims entry {item.strip()!r} is not NAME=SIZE",
                                  fix="write --dims batch=8,length=1024,d_model=512")
        sizes[name.strip()] = int(value)
    return sizes


def _size(dim: str, sizes: dict[str, int]) -> int | None:
    """A dim's size: given, said by its name (``2?``, ``seq[1:]?``), or, for another inferred dim made from
    a named one (``head_dim?`` of ``x[..., :half]``), that dim's (an upper bound); None where unknown."""
    if dim in sizes:
        return sizes[dim]
    size = literal_size(dim) or slice_size(dim, sizes)
    if size is None and dim.endswith(INFERRED) and unsliced(dim) in sizes:
        size = sizes[unsliced(dim)]  # (x[..., :half]'s head_dim[:half]?: at most head_dim's)
    return size


class _Sizer:
    """Local shapes and bytes of layouts, given dim sizes; collects what is missing."""

    def __init__(self, mesh: MeshSpec, sizes: dict[str, int], itemsize: int, where: str) -> None:
        self.mesh, self.sizes, self.itemsize, self.where = mesh, sizes, itemsize, where

    def global_shape(self, layout: Layout) -> tuple[int, ...]:
        missing = [d for d in layout.dims if d != BROADCAST and _size(d, self.sizes) is None]
        if missing:
            raise AnnotationError(
                f"{self.where}: no size for dim{'s' if len(missing) > 1 else ''} "
                f"{', '.join(repr(d) for d in dict.fromkeys(missing))}",
                fix="pass them with --dims " + ",".join(f"{d.rstrip(INFERRED)}=N" for d in dict.fromkeys(missing))
                    + " or dims={...} in @mesh(...)")
        # (a size-1 dim split over mesh axes: one entry per device, as an all_gather of each device's entry has it)
        return tuple((self.mesh.size(a) if a else 1) if d == BROADCAST else _size(d, self.sizes) or 0
                     for d, a in zip(layout.dims, layout.axes))

    def local_shape(self, layout: Layout) -> tuple[int, ...]:
        shape = []
        for dim, size, axes in zip(layout.dims, self.global_shape(layout), layout.axes):
            shards = self.mesh.size(axes)
            if size % shards:
                raise LayoutError(f"{self.where}: dim {dim!r} has size {size}, which mesh axes "
                                  f"{'x'.join(axes)} ({shards} shards) do not divide",
                                  fix=f"choose a size of {dim!r} that is a multiple of {shards}")
            shape.append(size // shards)
        return tuple(shape)

    def bytes(self, layout: Layout) -> int:
        return math.prod(self.local_shape(layout)) * self.itemsize


def _collective_bytes(kind: str, axes: tuple[str, ...], layout: Layout, sizer: _Sizer, instructions: int) -> int:
    c = collective(kind)
    return c.result_bytes(sizer.bytes(layout), sizer.mesh.size(axes)) * instructions


_NAMES = {8: "float64", 4: "float32", 2: "bfloat16/float16", 1: "int8"}


def _wire(kind: str, itemsize: int, reduce_dtype: str | None, dtype: str | None = None) -> tuple[int, str]:
    """Bytes per element a collective moves, and its dtype: ``dtype`` where the code says the value's
    (a comparison's bool, an integer's int32, an ``astype``'s), else the float inputs' ``itemsize``; a psum
    (or psum_scatter) of 2-byte floats adds them in float32 (as ``jnp.sum`` accumulates on one device), or
    in ``reduce_dtype``."""
    low_float = dtype in ("float16", "bfloat16") if dtype is not None else itemsize == 2
    if kind in ("psum", "psum_scatter") and low_float:
        if reduce_dtype is not None:
            return 2, f"{reduce_dtype} (reduce_dtype)"
        return 4, f"float32 ({dtype or '2-byte floats'} accumulate in float32)"
    if dtype is not None:
        return DTYPE_BYTES[dtype], dtype
    return itemsize, _NAMES.get(itemsize, f"{itemsize}-byte")


def _squeezed(layout: Layout) -> Layout:
    """``layout`` without its size-1 dims (a statistic kept with keepdims or not is one collective)."""
    kept = [i for i, d in enumerate(layout.dims) if d != BROADCAST]
    return Layout(tuple(layout.dims[i] for i in kept), tuple(layout.axes[i] for i in kept), layout.partial)


@dataclass(frozen=True)
class Distinct:
    """A communicating record as XLA's common-subexpression pass leaves it (see :func:`distinct`)."""

    record: Record
    #: The loops that multiply it: a Python loop whose iterations all read the same value is not one.
    loops: tuple
    #: The dtype each of its instructions moves (Collective.moves), and of those the ones not merged.
    moved: tuple[str | None, ...]
    fresh: tuple[str | None, ...]
    #: The line of the record an instruction merged with (None: none merged).
    merged_with: int | None


def distinct(records: Sequence[Record]) -> Iterator[Distinct]:
    """The records that communicate, each with its instructions that XLA runs: one collective per distinct
    value and scope (the same psum of the same value twice, softmax's and log_softmax's max and sum of one
    input are one), none more for the iterations of a Python loop that never rebinds what it reads.
    explain's counts and plan's forward costs both read this."""
    seen: dict[tuple, int] = {}  # (instruction, axes, layout, value, scope) -> the line that first runs it
    for record in records:
        c = collective(record.kind)
        if not c.communicates:
            continue
        invariant = record.invariant or tuple(False for _ in record.loops)
        loops = tuple(trips for trips, same in zip(record.loops, invariant) if not same)
        moved = c.moves(record.dtype)
        parts = c.parts[:len(moved)] if c.parts else tuple(f"{record.kind}#{i}" for i in range(len(moved)))
        fresh, merged_with = [], None
        for part, part_dtype in zip(parts, moved):
            key = (part, record.axes, _squeezed(record.layout) if c.squeezed else record.layout, record.value,
                   repr(loops))
            if record.value is not None and key in seen:
                merged_with = seen[key]
                continue
            seen[key] = record.line
            fresh.append(part_dtype)
        yield Distinct(record, loops, moved, tuple(fresh), merged_with)


def _trips(loops, sizes: dict[str, int], where: str, line: int, traced: bool = True) -> int:
    """How many times a statement inside ``loops`` runs per call (``traced=False``: how many
    copies of it the compiled program holds: Python loops unroll, scan bodies appear once)."""
    total = 1
    for trips in loops:
        if isinstance(trips, TracedLoop):
            if not traced:
                if trips.unroll is not True and trips.unroll == 1:
                    continue
                count = _trips((trips.trips,), sizes, where, line)
                k = count if trips.unroll is True else min(int(trips.unroll), count)
                total *= k + count % k  # the unrolled copies, and one per iteration left over
                continue
            trips = trips.trips
        if isinstance(trips, int):
            total *= trips
        elif isinstance(trips, str) and trips in sizes:
            total *= sizes[trips]
        elif isinstance(trips, UnknownLoop):
            raise AnnotationError(
                f"{where}: cannot count the iterations of the loop `for ... in {trips.text}` at line {trips.line} "
                f"(in {trips.function}" + (f"; {trips.reason}" if trips.reason else "") + f"), around line {line}",
                fix="the program runs as written; explain counts only collectives in loops that run every iteration "
                    "(move the collective before the break/continue, or out of the loop)" if trips.reason else
                    "loop over range(N) with N a literal, x.shape[i], or a field of a NamedTuple config default")
        else:
            raise AnnotationError(
                f"{where}: cannot count the iterations of a loop around the collective at line {line}"
                + (f" (no size for {trips!r}: a dim, or the list of structs the loop runs over)" if trips else ""),
                fix=(f"pass --dims {trips}=N" if trips else "loop over range(N) with N a literal or x.shape[i]; a "
                     "jax.lax.while_loop's count is known only when it runs, so explain cannot count what moves inside it "
                     "(the program runs as written)"))
    return total


def _tiling(name: str, layout: Layout, mesh: MeshSpec) -> list[str]:
    """Which block each device holds, as a grid for 1-D and 2-D meshes."""
    if len(mesh.names) > 2:
        return []
    rows_axis = mesh.names[0] if len(mesh.names) == 2 else None
    cols_axis = mesh.names[-1]
    rows = range(mesh.sizes[0]) if rows_axis else range(1)
    cols = range(mesh.sizes[-1])

    def block(coords: dict[str, int]) -> str:
        parts = []
        for dim, axes in zip(layout.dims, layout.axes):
            if axes:
                index = 0
                for a in axes:
                    index = index * mesh.size((a,)) + coords[a]
                parts.append(f"{dim}{index}")
        return ",".join(parts) or "all"

    cells = [[block({**({rows_axis: r} if rows_axis else {}), cols_axis: c}) for c in cols] for r in rows]
    width = max(len(cell) for row in cells for cell in row)
    width = max(width, max(len(f"{cols_axis}={c}") for c in cols))
    label = max(len(f"{rows_axis}={r}") for r in rows) if rows_axis else 0
    lines = [" " * label + " " + " ".join(f"{cols_axis}={c}".ljust(width) for c in cols)]
    for r, row in zip(rows, cells):
        head = f"{rows_axis}={r}".ljust(label) if rows_axis else ""
        lines.append(head + " " + " ".join(cell.ljust(width) for cell in row))
    return [line.rstrip() for line in lines]


def _with_aliases(sizes: dict[str, int], aliases: dict[str, str],
                  lined_up: dict[str, set[str]] | None = None, recipes: dict[str, tuple] | None = None
                  ) -> dict[str, int]:
    """``sizes`` and the sizes of inferred dims (``heads?``) lined up with a sized dim (JAX checks that
    dims lined up in an op have one size), through chains of them; ``lined_up``: every dim each inferred one
    met, either way (a user's ``query_pos`` of a mask sized by the ``tok?`` it met); ``recipes``: how the
    dims reshapes made are sized from others (``H // ws``)."""
    pairs = [*aliases.items(), *((a, b) for a, others in (lined_up or {}).items() for b in others)]
    out = dict(sizes)
    changed = True
    while changed:
        changed = False
        for a, b in pairs:
            for one, other in ((a, b), (b, a)):
                if one not in out and other in out:
                    out[one] = out[other]
                    changed = True
        for dim, recipe in (recipes or {}).items():
            if dim not in out and (size := _from_recipe(recipe, out)) is not None and size > 0:
                out[dim] = size
                changed = True
    return out


def _from_recipe(recipe: tuple, sizes: dict[str, int]) -> int | None:
    """The size a reshape's recipe gives (see ``ModuleContext.size_recipes``), or None while a dim it reads is
    unsized."""
    kind = recipe[0]
    if kind == "int":
        return recipe[1]
    if kind == "dim":
        return 1 if recipe[1] == BROADCAST else _size(recipe[1], sizes)
    if kind == "rest":
        total = [1 if d == BROADCAST else _size(d, sizes) for d in recipe[1]]
        others = [_from_recipe(r, sizes) for r in recipe[2]]
        if None in total or None in others or 0 in others:
            return None
        whole, known = math.prod(total), math.prod(others)  # type: ignore[arg-type]
        return whole // known if whole % known == 0 else None
    left, right = _from_recipe(recipe[1], sizes), _from_recipe(recipe[2], sizes)
    if left is None or right is None:
        return None
    if kind == "//":
        return left // right if right else None
    return left * right if kind == "*" else left + right if kind == "+" else left - right


def _report(ctx: ModuleContext, fn: cst.FunctionDef, plan: FunctionPlan, sizes: dict[str, int],
            itemsize: int) -> FunctionReport:
    sizes = _with_aliases(sizes, ctx.root.dim_aliases, ctx.root.lined_up, ctx.root.size_recipes)
    sizer = _Sizer(plan.mesh, sizes, itemsize, f"{ctx.path}::{plan.name}")
    report = FunctionReport(plan.name, ctx.line(fn.name), str(plan.mesh), plan.mesh.devices,
                            structure=dict(plan.args))
    hints = {p.name.value: p.annotation.annotation for p in (*fn.params.posonly_params, *fn.params.params,
                                                            *fn.params.kwonly_params) if p.annotation}
    for name, layout in plan.in_layouts.items():
        report.args.append(ArgReport(name, layout.describe(), sizer.global_shape(layout), sizer.local_shape(layout),
                                     sizer.bytes(layout), _tiling(name, layout, plan.mesh),
                                     (name in hints and is_integer_hint(ctx, hints[name]))
                                     or name in plan.index_params, name in plan.key_params,
                                     (name in hints and hint_dtype(ctx, hints[name]) == "bool")
                                     or name in plan.mask_params))
    for binding in plan.bindings:
        if any(_size(d, sizes) is None and d.endswith(INFERRED) for d in binding.layout.dims):
            # a reshape's new dim no size names (its sizes come from the code): the value is shown, unsized
            report.values.append(ValueReport(binding.line, binding.name, binding.layout.describe(), (), 0, False))
            continue
        report.values.append(ValueReport(binding.line, binding.name, binding.layout.describe(),
                                         sizer.local_shape(binding.layout), sizer.bytes(binding.layout)))
    for d in distinct(plan.records):
        record, c = d.record, collective(d.record.kind)
        repeat = _trips(d.loops, sizes, sizer.where, record.line)
        copies = _trips(d.loops, sizes, sizer.where, record.line, traced=False)
        size, dtypes = 0, []
        for part_dtype in d.fresh:
            wire, wire_dtype = _wire(record.kind, itemsize, plan.reduce_dtype, part_dtype)
            size += _collective_bytes(record.kind, record.axes, record.layout, sizer, 1) * wire // itemsize
            dtypes.append(wire_dtype)
        dtype = " + ".join(dict.fromkeys(dtypes)) or _wire(record.kind, itemsize, plan.reduce_dtype, d.moved[0])[1]
        reason = record.reason
        if len(d.fresh) < len(d.moved):
            reason += (f" (XLA computes {'it' if not d.fresh else 'part of it'} once, with the same collective at "
                       f"line {d.merged_with}: counted there)")
        report.collectives.append(CollectiveReport(
            record.line, record.kind, c.hlo, len(d.fresh) * repeat, record.axes, record.dim,  # type: ignore[arg-type]
            size * repeat, reason, len(d.fresh) * copies, size * copies, dtype))
    return report


def chosen_functions(ctx: ModuleContext, path: str, func: str | None) -> list:
    """The module's ``@mesh`` functions and their decorators (only ``func``, if given); an error
    at the top of the file naming the choices when there is none to analyse."""
    found = mesh_functions(ctx)
    top = SourceSpan(path, 1, 1, ctx.lines[0] if ctx.lines else "")
    if func is not None:
        names = [fn.name.value for fn, _ in found]
        found = [(fn, d) for fn, d in found if fn.name.value == func]
        if not found:
            raise MeshifyError(f"{path} has no @mesh function named {func!r}", span=top,
                               fix="choose one of: " + (", ".join(names) or "(none)"), code="MSH060")
    if not found:
        from meshify.rewrite._driver import refuse_mesh_calls

        refuse_mesh_calls(ctx, "explain (and verify)")  # mesh(...)(f): the fix names the def to decorate
        raise MeshifyError(f"{path} has no @mesh functions", code="MSH060", span=top,
                           fix="decorate a function with @mesh(...) from meshify")
    return found


def explain_source(source: str | bytes, path: str, sizes: dict[str, int] | None = None,
                   func: str | None = None, itemsize: int = 4) -> list[FunctionReport]:
    """Reports for the ``@mesh`` functions of a module (or just ``func``)."""
    ctx = parse_context(source, path)
    found = chosen_functions(ctx, path, func)
    reports = []
    for fn, decorator in found:
        mesh, rules = read_mesh_decorator(ctx, decorator)
        # --dims sizes reach the rewriter too: a halo's width follows from the kernel's size.
        merged = {**read_mesh_dims(ctx, decorator), **(sizes or {})}
        plan = FunctionRewriter(ctx, fn, mesh, rules, sizes=merged, assume_defaults=True,
                                declared=read_mesh_dims(ctx, decorator)).run()
        reports.append(_report(ctx, fn, plan, merged, itemsize))
    return reports
