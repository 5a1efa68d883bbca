"""Checks one program: convert it, run every ``@mesh`` function of it on 8 simulated devices, compare.

Each function (:meth:`Program.calls`: ``f``, and ``g``, ``f2`` or a method's class when the
program has them) runs through both paths, each against the original module's
``.reference`` on one device: ``converted`` (the module converted with ``convert_source``,
the generated file imported) and ``decorator`` (the original module's ``@mesh`` functions,
rewritten on first call).  A method is called, then ``self.w`` is changed, then called
again: both results are compared.  :func:`check` returns an :class:`Outcome`:

- ``accepted``: converted, ran, and matched ``.reference`` on both paths (and, for scalar
  losses, so did ``jax.grad`` in every float argument);
- ``rejected``: a :class:`MeshifyError`, from ``convert_source`` (with a place
  ``path:line:col`` inside the file, the source line with a caret, and a fix) or from a call
  (with a fix).  ``Outcome.provoked`` says whether it was built to be: the program is meant to
  be rejected, or the error's line holds the fragment of one of the program's triggers (an
  option meshify may legitimately refuse, see ``programs.py``);
- ``mismatch``: it ran but a value or gradient differs beyond the tolerance, or its NaN/inf
  positions differ from the reference's (equal NaN positions are fine);
- ``crash``: any other exception, at conversion, import or run time, or a rejection
  without a place or a fix;
- ``invalid``: the reference itself failed: the generator wrote a program JAX rejects;
- ``xla``: the sharded program differs under ``jax.jit`` but, run op by op
  (``jax.disable_jit``), equals the reference: what meshify wrote computes the right
  function, and XLA's compilation of it gives other numbers (rounding that moves a max/min tie
  and so its gradient).  Counted and saved apart, not as a failure -- unless a float output
  differs beyond ``GROSS``: no rounding explains that, and a miscompile meshify's program
  triggers is a wrong result for the user all the same (a ``mismatch``).

Values are compared with ``rtol=1e-4`` and ``atol=1e-4`` times the magnitude of the
reference (at least 1): a sharded sum reassociates, and its round-off scales with its terms.
Programs computing in float16 or bfloat16 (``Program.precision``) get 8 ulps of that dtype.

Failing programs are written with :func:`save` as regression files (the program's source plus
a ``FUZZ = {...}`` literal with its sizes, arguments and seed); :func:`load` reads them back.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import itertools
import pprint
import sys
import traceback
import warnings
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from meshify.errors import MeshifyError
from meshify.rewrite import convert_source
from tests.fuzz.programs import Arg, Entry, Program

# Generated programs put functions on meshes whose axes their rules may leave unused (a twin on another mesh):
# the first-call warning about such an axis says nothing about soundness.
warnings.filterwarnings("ignore", message=r".*(splits|split) no argument, result or value", category=RuntimeWarning)

__all__ = ["FAILURES", "KINDS", "Outcome", "check", "inputs", "load", "save"]

_PACKAGE = str(Path(__file__).resolve().parents[2] / "meshify")

RTOL = 1e-4
ATOL = 1e-4
#: Tolerances (rtol, atol factor) of programs computing in a low-precision dtype: 8 ulps.
LOW_PRECISION = {"bfloat16": (8 * 2.0 ** -7, 8 * 2.0 ** -7), "float16": (8 * 2.0 ** -10, 8 * 2.0 ** -10)}
#: Beyond this many times the program's tolerance, a forward output of floats differing under jit is no rounding
#: XLA's numerics explain (a moved max/min tie changes a gradient, not a value): a miscompile meshify's program
#: triggers, wrong numbers for the user all the same, so a mismatch (a split of a dynamic slice's read: XLA folded
#: the block slice into it and lost the clamping of its start, session 28).
GROSS = 10

#: The magnitude of ``cancel`` inputs: 2 of them overflow float16; 2 of them leave bfloat16 an ulp of 16.
CANCEL = {"float16": 40000.0, "bfloat16": 1024.0, "float32": 2.0 ** 24}

KINDS = ("accepted", "rejected", "mismatch", "crash", "invalid", "xla")
FAILURES = ("mismatch", "crash", "invalid")
PATHS = ("converted", "decorator")
#: What ``convert`` says refusing a module that makes a function by ``mesh(...)(f)`` (``Program.called``).
CALL_FORM = "a function wrapped by a call is rewritten only when it runs"


@dataclass(frozen=True)
class Outcome:
    """What happened to one program; ``detail`` says why for every kind but ``accepted``."""

    kind: str
    detail: str = ""
    code: str = ""  # the error code of a rejection
    grad: bool = False  # gradients were compared too
    provoked: bool = False  # a rejection the program was built to provoke (a trigger's line)

    @property
    def failed(self) -> bool:
        return self.kind in FAILURES

    def headline(self) -> str:
        return f"{self.kind}: {self.detail.strip().splitlines()[0] if self.detail.strip() else ''}"


_counter = itertools.count()


def _import(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _value(arg: Arg, shape: tuple[int, ...], rng: np.random.Generator) -> Any:
    if arg.kind == "ids":
        return rng.integers(arg.low, arg.high, shape).astype(arg.dtype if "int" in arg.dtype else np.int32)
    if arg.kind == "key":
        return jax.random.key(int(rng.integers(0, 2 ** 31)))
    if arg.kind == "cancel":  # +big in the first half of `axis`, -big in the second, plus noise
        n = shape[arg.axis]
        index = np.arange(n).reshape([n if k == arg.axis else 1 for k in range(len(shape))])
        sign = np.where(index < n // 2, 1.0, np.where(index >= n - n // 2, -1.0, 0.0))
        x = (CANCEL[arg.dtype] * sign + rng.standard_normal(shape)).astype(np.float32)
    elif arg.kind == "steps":
        x = (arg.std / 2 * rng.integers(-2, 3, shape)).astype(np.float32)
    else:
        x = (arg.std * rng.standard_normal(shape)).astype(np.float32)
    return x if arg.dtype == "float32" else x.astype(jnp.dtype(arg.dtype))


def _draw(args: tuple[Arg, ...], sizes: dict[str, int], rng: np.random.Generator) -> tuple[Any, ...]:
    return tuple(_value(a, tuple(sizes[d] for d in a.dims), rng) for a in args)


def inputs(program: Program) -> tuple[Any, ...]:
    """The main function's seeded inputs: float normals with each argument's std (or a few steps of it)
    in the argument's dtype, int32 ids in ``[low, high)``, ``jax.random.key``s."""
    return _draw(program.args, program.sizes, np.random.default_rng(program.seed))


def _entry_inputs(program: Program, index: int, entry: Entry) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """An entry's arguments, and (for a method) ``self.w``'s two values."""
    if index == 0:
        args = inputs(program)
    else:
        args = _draw(entry.args, entry.sizes, np.random.default_rng(program.seed + 7919 * index))
    attrs: tuple[Any, ...] = ()
    if entry.attr is not None:
        rng = np.random.default_rng(program.seed + 104_729 + index)
        attrs = tuple(jnp.asarray(a) for a in _draw((entry.attr, entry.attr), entry.sizes, rng))
    return args, attrs


def _numpy(tree: Any) -> Any:
    return jax.tree.map(np.asarray, tree)


def _trace() -> str:
    """The exception being handled: a first line naming it and the innermost meshify frame, then the trace."""
    error = sys.exc_info()[1]
    frames = traceback.extract_tb(error.__traceback__) if error is not None else []
    ours = [f for f in frames if f.filename.startswith(_PACKAGE)]
    where = f" [meshify/{ours[-1].filename[len(_PACKAGE) + 1:]}:{ours[-1].lineno} in {ours[-1].name}]" if ours else ""
    first = str(error).strip().splitlines()[0][:300] if error is not None and str(error).strip() else ""
    return f"{type(error).__name__}: {first}{where}\n" + traceback.format_exc(limit=-8)


def _argnums(entry: Entry) -> tuple[int, ...]:
    return tuple(i for i, (_, differentiable) in enumerate(entry.packed_names()) if differentiable)


def _scenario(entry: Entry, module: ModuleType, attrs: tuple[Any, ...],
              rebinds: tuple[tuple[str, str, str], ...] = ()) -> Iterator[Any]:
    """The callables to call, in order: the function; or a method, before and after ``self.w`` and
    ``self.scale`` change.  With ``rebinds``, each module constant (or array) is set to its first value before
    the first call and to its second (from outside the module, as a schedule would) before a second call."""
    def value(text: str) -> Any:
        return eval(text[1:], vars(module)) if text.startswith("=") else ast.literal_eval(text)

    for name, first, _ in rebinds:
        setattr(module, name, value(first))
    if not entry.method:
        yield getattr(module, entry.name)
        if rebinds:
            for name, _, second in rebinds:
                setattr(module, name, value(second))
            yield getattr(module, entry.name)
        return
    obj = getattr(module, entry.name)(attrs[0])
    yield getattr(obj, entry.method)
    obj.w = attrs[1]
    obj.scale = 0.5
    for name, _, second in rebinds:
        setattr(module, name, value(second))
    yield getattr(obj, entry.method)


def _plain(fn: Any) -> Callable[..., Any]:
    return lambda *a: fn(*a)


@contextlib.contextmanager
def _single_device(module: ModuleType) -> Iterator[None]:
    """Within: every ``@mesh`` function of ``module`` is its ``.reference``, so that a reference calling
    another ``@mesh`` function (``f`` calling ``g``) runs on one device all the way down."""
    saved = {k: v for k, v in vars(module).items() if hasattr(v, "reference") and hasattr(v, "mesh_spec")}
    try:
        for k, v in saved.items():
            setattr(module, k, v.reference)
        yield
    finally:
        for k, v in saved.items():
            setattr(module, k, v)


def _reference(entry: Entry, module: ModuleType, args, attrs, rebinds=()) -> list[Any]:
    """The reference's outputs (values, or value and gradients for losses) per call; one XLA program each."""
    with _single_device(module):
        return _reference_calls(entry, module, args, attrs, rebinds)


def _reference_calls(entry: Entry, module: ModuleType, args, attrs, rebinds=()) -> list[Any]:
    out = []
    for fn in _scenario(entry, module, attrs, rebinds):
        if rebinds:  # JAX keeps a @jax.checkpoint helper's trace, and the constants it read, across jax.jit calls
            jax.clear_caches()
        ref = _plain(getattr(fn, "reference", fn))  # (a module-level @mesh function is its reference already)
        if entry.grad:
            out.append(_numpy(jax.jit(jax.value_and_grad(ref, _argnums(entry)))(*entry.packed(module, args))))
        else:
            out.append(_numpy(jax.jit(ref)(*entry.packed(module, args))))
    return out


def _eager(entry: Entry, module: ModuleType, args, attrs, reference: bool, rebinds=()) -> list[Any]:
    out = []
    with jax.disable_jit(), (_single_device(module) if reference else contextlib.nullcontext()):
        for fn in _scenario(entry, module, attrs, rebinds):
            if rebinds:  # (as in _reference_calls)
                jax.clear_caches()
            f = _plain(getattr(fn, "reference", fn) if reference else fn)
            packed = entry.packed(module, args)
            out.append(_numpy(jax.value_and_grad(f, _argnums(entry))(*packed) if entry.grad else f(*packed)))
    return out


def check(program: Program, workdir: Path) -> Outcome:
    """Converts, runs and compares every ``@mesh`` function of ``program`` on both paths; never raises."""
    stem = f"fuzz_{zlib.crc32(program.text.encode()):08x}_{next(_counter)}"
    path = workdir / f"{stem}.py"
    path.write_text(program.text)
    entries = program.calls()
    try:
        data = [_entry_inputs(program, i, e) for i, e in enumerate(entries)]
        original = _import(path, stem)
        expected = [_reference(e, original, args, attrs, program.rebinds) for e, (args, attrs) in zip(entries, data)]
    except Exception:
        return Outcome("invalid", "the reference (plain JAX) failed: " + _trace())
    paths = PATHS[::-1] if program.rebinds else PATHS
    try:
        text = convert_source(program.text, str(path)).text
    except MeshifyError as e:
        problem = rejection_problem(e, str(path), program.text)
        if problem:
            return Outcome("crash", f"{problem}:\n{e}")
        if not (program.called and CALL_FORM in str(e)):
            return Outcome("rejected", str(e), e.code, provoked=provoked_by(program, e, str(path)))
        # f = mesh(...)(f): convert refuses the module, pointing at the call, with a fix; the decorator path runs it
        text, paths = "", ("decorator",)
    except Exception:
        return Outcome("crash", "convert_source raised: " + _trace())
    if program.called and text:
        return Outcome("crash", f"convert_source accepted a module making {', '.join(program.called)} by "
                                "mesh(...)(f) (its file would not show the collectives): it should refuse it")
    converted = None
    try:
        if text:
            generated = workdir / f"{stem}_sharded.py"
            generated.write_text(text)
            converted = _import(generated, stem + "_sharded")
    except MeshifyError as e:
        return _call_rejection(program, e, str(path), "importing the converted module")
    except Exception:
        return Outcome("crash", "importing the converted module raised: " + _trace() + "\n" + _excerpt(text))
    modules = {"converted": converted, "decorator": original}
    grads = False
    # With constants rebound from outside, the converted file may refuse the second call (an int
    # constant it was written for changed): the decorator path, which rewrites instead, goes first.
    for entry, (args, attrs), want in zip(entries, data, expected):
        for kind in paths:
            outcome = _check_entry(program, entry, modules[kind], original, args, attrs, want, kind, text, str(path))
            if outcome.kind != "accepted":
                return outcome
            grads |= outcome.grad
    return Outcome("accepted", grad=grads)


def _label(entry: Entry, path: str) -> str:
    name = f"{entry.name}.{entry.method}" if entry.method else entry.name
    return f"{name} ({path} path)"


def _check_entry(program: Program, entry: Entry, module: ModuleType, original: ModuleType, args, attrs,
                 expected: list[Any], path: str, text: str, source_path: str) -> Outcome:
    """One function on one path: each call's output, then its gradients, against the reference's."""
    label = _label(entry, path)
    tol = LOW_PRECISION.get(program.precision, (RTOL, ATOL))
    argnums = _argnums(entry)
    calls = _scenario(entry, module, attrs, program.rebinds)
    for i, (fn, want) in enumerate(zip(calls, expected)):
        what = f"{label}, call {i + 1}" if entry.method or program.rebinds else label
        if program.rebinds:  # (as in _reference_calls: each call sees the constants it is called with)
            jax.clear_caches()
        try:
            actual = _numpy(fn(*entry.packed(module, args)))
        except MeshifyError as e:
            return _call_rejection(program, e, source_path, f"calling {what}")
        except Exception:
            return Outcome("crash", f"calling {what} raised: " + _trace() + "\n" + _excerpt(text))
        problem = compare(actual, want[0] if entry.grad else want, f"{what}: output", tol)
        if problem and _gross(actual, want[0] if entry.grad else want, tol):
            return _mismatch(program, entry, module, original, args, attrs,
                             problem + " (beyond any rounding)\n" + _excerpt(text), call=i, gross=want[0] if entry.grad else want)
        if problem:
            return _mismatch(program, entry, module, original, args, attrs, problem + "\n" + _excerpt(text),
                             call=i)
        if not entry.grad:
            continue
        try:
            grads = _numpy(jax.jit(jax.grad(_plain(fn), argnums))(*entry.packed(module, args)))
        except MeshifyError as e:
            return _call_rejection(program, e, source_path, f"jax.grad of {what}")
        except Exception:
            return Outcome("crash", f"jax.grad of {what} raised: " + _trace() + "\n" + _excerpt(text))
        for j, a, e in zip(argnums, grads, want[1]):
            problem = compare(a, e, f"{what}: d/d{entry.packed_names()[j][0]}", tol)
            if problem:
                return _mismatch(program, entry, module, original, args, attrs, problem + "\n" + _excerpt(text),
                                 grad=True, call=i)
    return Outcome("accepted", grad=entry.grad)


def _call_rejection(program: Program, e: MeshifyError, path: str, when: str) -> Outcome:
    """A :class:`MeshifyError` at call time: a rejection if it carries a fix."""
    if not e.fix:
        return Outcome("crash", f"rejection without a fix ({when}):\n{e}")
    return Outcome("rejected", f"({when}) {e}", e.code, provoked=provoked_by(program, e, path))


def _gross(actual: Any, expected: Any, tol: tuple[float, float]) -> bool:
    """Whether float outputs differ beyond :data:`GROSS` times ``tol`` (integer ones may be a tie XLA broke
    otherwise)."""
    leaves = jax.tree.leaves(expected)
    floats = all(np.issubdtype(np.asarray(e).dtype, np.floating) or np.asarray(e).dtype.name == "bfloat16"
                 for e in leaves)
    return floats and bool(compare(actual, expected, "output", (GROSS * tol[0], GROSS * tol[1])))


def _mismatch(program: Program, entry: Entry, module: ModuleType, original: ModuleType, args, attrs, detail: str,
              grad: bool = False, call: int = 0, gross: Any = None) -> Outcome:
    """A mismatch, or ``xla`` when, run op by op (``jax.disable_jit``), the sharded program
    agrees with the reference: then only XLA's compilation of it differs, not what meshify wrote.
    ``call``: which call of the scenario differed; op by op, only the first is the same program.
    ``gross``: the reference's (jitted) outputs, for a difference beyond any rounding; excused only where jit
    changes the reference's own result as much (XLA folding ``x * jnp.eye(n)`` to +0.0 where ``x * 0`` of a
    negative ``x`` is -0.0, which then orders a ``top_k`` tie otherwise)."""
    tol = LOW_PRECISION.get(program.precision, (RTOL, ATOL))
    if (entry.method or program.rebinds) and call:  # a later call may differ for a cached program
        return Outcome("mismatch", detail, grad=grad)
    try:
        eager_reference = _eager(entry, original, args, attrs, reference=True)
        eager_sharded = _eager(entry, module, args, attrs, reference=False)
    except Exception:  # op by op fails somewhere JAX's jit does not: no evidence either way
        return Outcome("mismatch", detail, grad=grad)
    if entry.method or program.rebinds:  # (the first call of several: its own)
        eager_sharded, eager_reference = eager_sharded[:1], eager_reference[:1]
    if compare(eager_sharded, eager_reference, "op by op", tol):
        return Outcome("mismatch", detail, grad=grad)
    if gross is not None and not _gross(eager_reference[0][0] if entry.grad else eager_reference[0], gross, tol):
        return Outcome("mismatch", detail + "\n(not excused as XLA's numerics: under jit the reference gives what it "
                                            "gives op by op)", grad=grad)
    return Outcome("xla", "run op by op (no jit), the sharded program equals the reference; under jit XLA "
                          "computes it differently (a miscompile, or rounding that moves a max/min tie): "
                          f"{detail}", grad=grad)


def _excerpt(text: str) -> str:
    body = text[text.find("@mr.sharded"):] if "@mr.sharded" in text else text
    return "generated:\n" + body


def provoked_by(program: Program, e: MeshifyError, path: str) -> bool:
    """Whether a rejection is one the program was built to provoke: the whole program is (``provoked``),
    or the error's line holds a fragment of one of the program's triggers."""
    if program.provoked:
        return True
    span, lines = e.span, program.text.splitlines()
    if span is None:
        line = ""
    elif span.path == path and 1 <= span.line <= len(lines):
        line = lines[span.line - 1]
    else:  # a call-time error pointing into the generated file
        line = span.source_line
    fragments = [fragment for _, group in program.triggers for fragment in group]
    return any(fragment in line or fragment in e.headline for fragment in fragments)


def rejection_problem(e: MeshifyError, path: str, text: str) -> str:
    """What a rejection lacks (a place in the file, a caret, a fix), or ``""`` if nothing."""
    span = e.span
    if span is None:
        return "rejection without a source position"
    lines = text.splitlines()
    if span.path != path or not 1 <= span.line <= len(lines):
        return f"rejection points outside the file ({span.path}:{span.line})"
    if not 1 <= span.col <= len(lines[span.line - 1]) + 1:
        return f"rejection points past the end of line {span.line} (column {span.col})"
    message = str(e)
    if not message.startswith(f"{path}:{span.line}:{span.col}: error[MSH"):
        return "rejection message does not start with path:line:col: error[MSH...]"
    if "^" not in message:
        return "rejection message has no caret"
    if not e.fix or "\n  fix: " not in message:
        return "rejection without a fix"
    return ""


def compare(actual: Any, expected: Any, what: str, tol: tuple[float, float] = (RTOL, ATOL)) -> str:
    """Why ``actual`` differs from ``expected`` (structure, shape, dtype, NaN/inf positions, values), or ``""``.

    ``tol`` is (rtol, atol factor); the absolute tolerance is the factor times the reference's magnitude."""
    rtol, atol = tol
    a_leaves, a_tree = jax.tree.flatten(actual)
    e_leaves, e_tree = jax.tree.flatten(expected)
    if a_tree != e_tree and str(a_tree) != str(e_tree):  # (a converted file's NamedTuple is its own class)
        return f"{what}: structure {a_tree} != {e_tree}"
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        a, e = np.asarray(a), np.asarray(e)
        label = f"{what}[{i}]" if len(e_leaves) > 1 else what
        if a.shape != e.shape or a.dtype != e.dtype:
            return f"{label}: {a.dtype}{list(a.shape)} != reference {e.dtype}{list(e.shape)}"
        e64, a64 = e.astype(np.float64), a.astype(np.float64)
        a_nan, e_nan = np.isnan(a64), np.isnan(e64)
        if not np.array_equal(a_nan, e_nan):
            where = tuple(int(j) for j in np.argwhere(a_nan != e_nan)[0])
            return (f"{label}: NaN positions differ ({int(a_nan.sum())} NaNs, reference {int(e_nan.sum())}); "
                    f"first at {where}: {a64[where]!r} != reference {e64[where]!r}")
        finite = np.isfinite(e64)
        scale = max(1.0, float(np.max(np.abs(e64[finite]), initial=0.0)))
        close = np.isclose(a64, e64, rtol=rtol, atol=atol * scale, equal_nan=True)
        if not close.all():
            bad = np.argwhere(~close)
            where = tuple(int(j) for j in bad[0])
            with np.errstate(invalid="ignore"):
                diff = np.abs(a64 - e64)
            worst = float(np.max(diff[np.isfinite(diff)], initial=0.0))
            return (f"{label}: {len(bad)} of {e.size} values differ (max abs error {worst:.3g}, reference "
                    f"magnitude {scale:.3g}); first at {where}: {a64[where]!r} != reference {e64[where]!r}")
    return ""


# -- regression files ------------------------------------------------------------------------------


def save(program: Program, outcome: Outcome, directory: Path, note: str = "", name: str = "") -> Path:
    """Writes ``program`` as a regression file in ``directory`` (named ``name``, or by kind and hash)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name or f'{outcome.kind}_{zlib.crc32(program.text.encode()):08x}'}.py"
    meta = program.metadata() | {"expect": "accepted" if program.provoked == "" else "rejected"}
    header = [f"# Fuzz {outcome.kind} found by tests/fuzz on the {program.mesh} mesh.",
              *(f"# {line}" for line in outcome.headline().splitlines()),
              *(f"# {line}" for line in note.splitlines()),
              f"# Rerun: python -m pytest tests/test_regressions.py -k {path.stem}", ""]
    path.write_text("\n".join(header) + program.text + "\n\nFUZZ = " + pprint.pformat(meta, sort_dicts=False,
                                                                                         width=100) + "\n")
    return path


def load(path: Path) -> Program:
    """A program saved by :func:`save` (possibly edited by hand: ``FUZZ["xfail"]``, ``FUZZ["expect"]``)."""
    text = path.read_text()
    meta = None
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["FUZZ"]:
            meta = ast.literal_eval(node.value)
    if meta is None:
        raise ValueError(f"{path} has no FUZZ = {{...}} literal")
    args = tuple(Arg.from_json(a) for a in meta["args"])
    entries = tuple(Entry.from_json(e) for e in meta.get("entries", ()))
    triggers = tuple((reason, tuple(fragments)) for reason, fragments in meta.get("triggers", ()))
    return Program(text, meta["mesh"], dict(meta["sizes"]), args, meta["grad"], meta["seed"],
                   meta.get("provoked", ""), meta.get("expect", ""), meta.get("xfail", ""), entries,
                   meta.get("precision", ""), triggers, tuple(tuple(r) for r in meta.get("rebinds", ())),
                   tuple(meta.get("called", ())))
