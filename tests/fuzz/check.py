"""Checks one program: convert it, import the result, run it on 8 simulated devices, compare.

:func:`check` returns an :class:`Outcome`:

- ``accepted``: converted, ran, and matched the decorated function's ``.reference`` on one
  device (and, for scalar losses, so did ``jax.grad`` in every float argument);
- ``rejected``: ``convert_source`` raised a :class:`MeshifyError` with a place
  (``path:line:col`` inside the file), the source line with a caret, and a fix;
- ``mismatch``: it ran but a value or gradient differs beyond the tolerance;
- ``crash``: any other exception, at conversion, import or run time, or a rejection
  without a place or a fix;
- ``invalid``: the reference itself failed: the generator wrote a program JAX rejects;
- ``xla``: the converted program differs under ``jax.jit`` but, run op by op
  (``jax.disable_jit``), equals the reference: what meshify wrote computes the right
  function, and XLA's compilation of it gives other numbers (a miscompile, or rounding that
  moves a max/min tie and so its gradient).  Counted and saved apart, not as a failure.

Values are compared with ``rtol=1e-4`` and ``atol=1e-4`` times the magnitude of the
reference (at least 1): a sharded sum reassociates, and its round-off scales with its terms.

Failing programs are written with :func:`save` as regression files (the program's source plus
a ``FUZZ = {...}`` literal with its sizes, arguments and seed); :func:`load` reads them back.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import pprint
import traceback
import zlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import numpy as np

from meshify.errors import MeshifyError
from meshify.rewrite import convert_source
from tests.fuzz.programs import Arg, Program

__all__ = ["FAILURES", "KINDS", "Outcome", "check", "inputs", "load", "save"]

RTOL = 1e-4
ATOL = 1e-4

KINDS = ("accepted", "rejected", "mismatch", "crash", "invalid", "xla")
FAILURES = ("mismatch", "crash", "invalid")


@dataclass(frozen=True)
class Outcome:
    """What happened to one program; ``detail`` says why for every kind but ``accepted``."""

    kind: str
    detail: str = ""
    code: str = ""  # the error code of a rejection
    grad: bool = False  # gradients were compared too

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


def inputs(program: Program) -> tuple[np.ndarray, ...]:
    """Seeded inputs: float32 normals with each argument's std (or a few steps of it), int32 ids."""
    rng = np.random.default_rng(program.seed)
    out = []
    for arg in program.args:
        shape = tuple(program.sizes[d] for d in arg.dims)
        if arg.kind == "ids":
            out.append(rng.integers(0, arg.high, shape).astype(np.int32))
        elif arg.kind == "steps":
            out.append((arg.std / 2 * rng.integers(-2, 3, shape)).astype(np.float32))
        else:
            out.append((arg.std * rng.standard_normal(shape)).astype(np.float32))
    return tuple(out)


def _numpy(tree: Any) -> Any:
    return jax.tree.map(np.asarray, tree)


def _trace() -> str:
    return traceback.format_exc(limit=-8)


def check(program: Program, workdir: Path) -> Outcome:
    """Converts, runs and compares ``program`` (files go to ``workdir``); never raises."""
    stem = f"fuzz_{zlib.crc32(program.text.encode()):08x}_{next(_counter)}"
    path = workdir / f"{stem}.py"
    path.write_text(program.text)
    args = inputs(program)
    argnums = tuple(i for i, a in enumerate(program.args) if a.kind != "ids")
    try:
        original = _import(path, stem)
        # One XLA program each: the reference, and (for losses) its value and gradients.
        if program.grad:
            expected, expected_grads = _numpy(jax.jit(jax.value_and_grad(original.f.reference, argnums))(*args))
        else:
            expected = _numpy(jax.jit(original.f.reference)(*args))
    except Exception:
        return Outcome("invalid", "the reference (plain JAX) failed:\n" + _trace())
    try:
        text = convert_source(program.text, str(path)).text
    except MeshifyError as e:
        problem = rejection_problem(e, str(path), program.text)
        if problem:
            return Outcome("crash", f"{problem}:\n{e}")
        return Outcome("rejected", str(e), e.code)
    except Exception:
        return Outcome("crash", "convert_source raised:\n" + _trace())
    try:
        generated = workdir / f"{stem}_sharded.py"
        generated.write_text(text)
        converted = _import(generated, stem + "_sharded")
        actual = _numpy(converted.f(*args))
    except Exception:
        return Outcome("crash", "running the converted module raised:\n" + _trace() + "\n" + _excerpt(text))
    problem = compare(actual, expected, "output")
    if problem:
        return _mismatch(program, original.f.reference, converted.f, args, argnums, problem + "\n" + _excerpt(text))
    if not program.grad:
        return Outcome("accepted")
    outcome = _check_grads(program, converted.f, args, argnums, expected_grads, text)
    if outcome.kind == "mismatch":
        return _mismatch(program, original.f.reference, converted.f, args, argnums, outcome.detail, grad=True)
    return outcome


def _mismatch(program: Program, reference, sharded, args, argnums, detail: str, grad: bool = False) -> Outcome:
    """A mismatch, or ``xla`` when, run op by op (``jax.disable_jit``), the converted program
    agrees with the reference: then only XLA's compilation of it differs, not what meshify wrote."""
    def run(fn):
        with jax.disable_jit():
            return _numpy(jax.value_and_grad(fn, argnums)(*args) if program.grad else fn(*args))
    try:
        eager_reference, eager_sharded = run(reference), run(sharded)
    except Exception:  # op by op fails somewhere JAX's jit does not: no evidence either way
        return Outcome("mismatch", detail, grad=grad)
    if compare(eager_sharded, eager_reference, "op by op"):
        return Outcome("mismatch", detail, grad=grad)
    return Outcome("xla", "run op by op (no jit), the converted program equals the reference; under jit XLA "
                          "computes it differently (a miscompile, or rounding that moves a max/min tie): "
                          f"{detail}", grad=grad)


def _check_grads(program: Program, sharded, args, argnums, expected, text: str) -> Outcome:
    try:
        actual = _numpy(jax.jit(jax.grad(sharded, argnums))(*args))
    except Exception:
        return Outcome("crash", "jax.grad of the converted function raised:\n" + _trace() + "\n" + _excerpt(text))
    for i, a, e in zip(argnums, actual, expected):
        problem = compare(a, e, f"d/d{program.args[i].name}")
        if problem:
            return Outcome("mismatch", problem + "\n" + _excerpt(text), grad=True)
    return Outcome("accepted", grad=True)


def _excerpt(text: str) -> str:
    body = text[text.find("@mr.sharded"):] if "@mr.sharded" in text else text
    return "generated:\n" + body


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


def compare(actual: Any, expected: Any, what: str) -> str:
    """Why ``actual`` differs from ``expected`` (structure, shape, dtype, values), or ``""``."""
    a_leaves, a_tree = jax.tree.flatten(actual)
    e_leaves, e_tree = jax.tree.flatten(expected)
    if a_tree != e_tree:
        return f"{what}: structure {a_tree} != {e_tree}"
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        label = f"{what}[{i}]" if len(e_leaves) > 1 else what
        if a.shape != e.shape or a.dtype != e.dtype:
            return f"{label}: {a.dtype}{list(a.shape)} != reference {e.dtype}{list(e.shape)}"
        e64, a64 = e.astype(np.float64), a.astype(np.float64)
        finite = np.isfinite(e64)
        scale = max(1.0, float(np.max(np.abs(e64[finite]), initial=0.0)))
        close = np.isclose(a64, e64, rtol=RTOL, atol=ATOL * scale, equal_nan=True)
        if not close.all():
            bad = np.argwhere(~close)
            where = tuple(int(j) for j in bad[0])
            worst = float(np.nanmax(np.abs(a64 - e64)))
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
    return Program(text, meta["mesh"], dict(meta["sizes"]), args, meta["grad"], meta["seed"],
                   meta.get("provoked", ""), meta.get("expect", ""), meta.get("xfail", ""))
