"""Builds, runs and checks the op corpus on simulated devices.

For one case, one mesh and one rule set, :func:`build` writes the case's source under
a filled-in ``@mesh(...)`` decorator to a module file and imports it (the decorator
path), converts that file with :func:`meshify.rewrite.convert_source` and imports the
result (the converted-file path).  Both are cached, so a mesh sweep pays for each
rewrite and each XLA compile once (while it runs: the cache is small, to bound memory).

Inputs come from a seeded generator per case, sized by :data:`SIZES` (every size a
multiple of 8, so that every mesh divides it).  Results are compared with
``rtol=1e-5`` and an ``atol`` of ``1e-5`` times the magnitude of the reference (at
least 1): a sharded sum reassociates, and its rounding error scales with its terms.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import inspect
import re
import shutil
import sys
import tempfile
import textwrap
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from meshify.annotate import TensorHint
from meshify.rewrite import convert_source

__all__ = [
    "ALL_MESHES",
    "HEADER",
    "MESHES",
    "RTOL",
    "SIZES",
    "Built",
    "Case",
    "assert_close",
    "build",
    "case",
    "collective_counts",
    "collective_shapes",
    "grads",
    "header_module",
    "inputs",
    "mesh_rules",
    "reference",
    "reference_grads",
    "registry",
]

#: Every generated module starts with these imports; the aliases check that ops are
#: matched by qualified name, however they were imported.
HEADER = """\
import jax
import jax.numpy as jnp
import jax.numpy as xp
import numpy as np
from jax import nn
from jax.nn import relu
from jax.nn import softmax as sm
from jax.numpy import einsum as es
from jax.numpy import maximum
from jax.numpy import sum as jsum

from meshify import Tensor, mesh
"""

#: Mesh name -> axis sizes, in order.  ``8`` is a one-axis mesh.
MESHES: dict[str, dict[str, int]] = {
    "8": {"model": 8},
    "1x8": {"data": 1, "model": 8},
    "2x4": {"data": 2, "model": 4},
    "4x2": {"data": 4, "model": 2},
    "8x1": {"data": 8, "model": 1},
}
ALL_MESHES = tuple(MESHES)

#: Dim name -> global size.  Multiples of 8, distinct where dims meet in a contraction.
SIZES = {"batch": 16, "length": 24, "kv_length": 16, "seq": 24, "d_model": 32, "d_ff": 48, "heads": 8,
         "d_head": 4, "vocab": 40}

RTOL = 1e-5
ATOL = 1e-5


@dataclass(frozen=True)
class Case:
    """One corpus function and how to sweep it.

    Attributes:
        fn: the plain function (its own reference).
        rules: names of rule sets (keys of the cases module's ``RULES``), first one sampled always.
        grad: whether to check ``jax.grad`` of a scalar loss of the output too.
        meshes: the meshes to run on.
        xfail: ``(mesh, rules)`` or ``(mesh, rules, path)`` -> why that combination fails
            today (``"*"`` matches anything); the tests mark it ``xfail(strict=True)``.
    """

    fn: Callable[..., Any]
    rules: tuple[str, ...]
    grad: bool = False
    meshes: tuple[str, ...] = ALL_MESHES
    xfail: dict[tuple[str, ...], str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.fn.__name__

    def xfail_reason(self, mesh: str, rules: str, path: str) -> str:
        """Why this combination is expected to fail, or ``""``."""
        for key, reason in self.xfail.items():
            if all(k in ("*", v) for k, v in zip(key, (mesh, rules, path))):
                return reason
        return ""


_REGISTRY: dict[str, Case] = {}


def case(*rules: str, grad: bool = False, meshes: Sequence[str] = ALL_MESHES,
         xfail: dict[tuple[str, ...], str] | None = None) -> Callable[[Callable], Callable]:
    """Registers a corpus function; returns it unchanged."""

    def register(fn: Callable) -> Callable:
        assert fn.__name__ not in _REGISTRY, f"duplicate case {fn.__name__}"
        _REGISTRY[fn.__name__] = Case(fn, tuple(rules), grad, tuple(meshes), dict(xfail or {}))
        return fn

    return register


def registry() -> dict[str, Case]:
    """Every registered case, by name (import the cases module first)."""
    return dict(_REGISTRY)


# -- sources and modules -----------------------------------------------------------------


def mesh_rules(rules: dict[str, object], mesh: str) -> dict[str, object]:
    """``rules`` restricted to the axes of ``mesh`` (a tuple losing all its axes maps to None)."""
    axes = MESHES[mesh]
    out: dict[str, object] = {}
    for dim, target in rules.items():
        kept = tuple(a for a in ((target,) if isinstance(target, str) else target or ()) if a in axes)
        out[dim] = None if not kept else kept[0] if len(kept) == 1 else kept
    return out


def function_source(fn: Callable) -> str:
    """``fn``'s source without its decorators, dedented."""
    lines = textwrap.dedent(inspect.getsource(fn)).splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("def "))
    return "".join(lines[start:])


def module_source(fn: Callable, mesh: str, rules: dict[str, object]) -> str:
    """A module holding ``fn`` under ``@mesh(<mesh axes>, rules=<rules>)``."""
    axes = ", ".join(f"{name}={size}" for name, size in MESHES[mesh].items())
    return f"{HEADER}\n\n@mesh({axes}, rules={mesh_rules(rules, mesh)!r})\n{function_source(fn)}"


@functools.cache
def _workdir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="meshify-ops-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def _import_file(path: Path, name: str) -> ModuleType:
    """Imports ``path`` as module ``name`` without keeping it in ``sys.modules``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


@dataclass(frozen=True)
class Built:
    """One case on one mesh with one rule set, both ways."""

    source: str
    decorated: Any  # meshify.MeshFunction
    converted_text: str
    converted: Any  # meshify.runtime.Sharded

    def program(self, path: str) -> Any:
        return {"decorator": self.decorated, "converted": self.converted}[path]


# Few entries: a sweep visits each (case, mesh, rules) in a row, and every module holds
# compiled programs, so a larger cache only costs memory.
@functools.lru_cache(maxsize=8)
def _module(name: str, text: str) -> ModuleType:
    path = _workdir() / f"{name}.py"
    path.write_text(text)
    return _import_file(path, name)


def header_module() -> ModuleType:
    """A module holding :data:`HEADER` alone."""
    return _module("ops_header", HEADER)


def _stem(case_name: str, mesh: str, rules_name: str) -> str:
    return re.sub(r"\W", "_", f"ops_{case_name}_{mesh}_{rules_name}")


def build(c: Case, mesh: str, rules_name: str, rules: dict[str, object], path: str = "both") -> Built:
    """Writes, imports and (for ``path`` in ``converted``/``both``) converts ``c`` on ``mesh``."""
    stem = _stem(c.name, mesh, rules_name)
    text = module_source(c.fn, mesh, rules)
    decorated = getattr(_module(stem, text), c.name)
    converted_text, converted = "", None
    if path in ("converted", "both"):
        converted_text = _converted_text(stem, text)
        converted = getattr(_module(stem + "_sharded", converted_text), c.name)
    return Built(text, decorated, converted_text, converted)


@functools.lru_cache(maxsize=64)
def _converted_text(stem: str, text: str) -> str:
    return convert_source(text, f"{stem}.py").text


# -- inputs, references, comparisons ----------------------------------------------------------


def _dims(hint: object) -> tuple[str, ...]:
    assert isinstance(hint, TensorHint), f"corpus parameters need Tensor hints, got {hint!r}"
    return hint.dims


def inputs(c: Case) -> tuple[np.ndarray, ...]:
    """Seeded float32 inputs for ``c``, shaped by its parameter hints and :data:`SIZES`."""
    rng = np.random.default_rng(zlib.crc32(c.name.encode()))
    params = inspect.signature(c.fn).parameters.values()
    shapes = [tuple(SIZES[d] for d in _dims(p.annotation)) for p in params]
    return tuple((0.5 * rng.standard_normal(s)).astype(np.float32) for s in shapes)


@functools.cache
def _reference(name: str) -> Any:
    c = _REGISTRY[name]
    return jax.tree.map(np.asarray, c.fn(*inputs(c)))


def reference(c: Case) -> Any:
    """``c.fn`` on :func:`inputs` on one device, as numpy (cached)."""
    return _reference(c.name)


def assert_close(actual: Any, expected: Any, what: str = "") -> None:
    """Same structure, shapes and dtypes; values within ``RTOL`` and a magnitude-scaled ``ATOL``."""
    actual_leaves, actual_tree = jax.tree.flatten(actual)
    expected_leaves, expected_tree = jax.tree.flatten(expected)
    assert actual_tree == expected_tree, f"{what}: structure {actual_tree} != {expected_tree}"
    for i, (a, e) in enumerate(zip(actual_leaves, expected_leaves)):
        a, e = np.asarray(a), np.asarray(e)
        label = f"{what}[{i}]" if len(expected_leaves) > 1 else what
        assert a.shape == e.shape, f"{label}: shape {a.shape} != {e.shape}"
        assert a.dtype == e.dtype, f"{label}: dtype {a.dtype} != {e.dtype}"
        if e.dtype == np.bool_ or np.issubdtype(e.dtype, np.integer):
            np.testing.assert_array_equal(a, e, err_msg=label)
            continue
        scale = max(1.0, float(np.max(np.abs(e.astype(np.float64)), initial=0.0)))
        np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=RTOL, atol=ATOL * scale,
                                   err_msg=label)


def _cotangents(c: Case) -> Any:
    rng = np.random.default_rng(zlib.crc32(c.name.encode()) + 1)
    return jax.tree.map(lambda r: rng.standard_normal(np.shape(r)).astype(np.float32), reference(c))


def grads(fn: Callable[..., Any], c: Case) -> tuple[np.ndarray, ...]:
    """``jax.grad`` (under ``jax.jit``) of ``sum(fn(*inputs) * cotangent)`` in every input."""
    cotangents = _cotangents(c)

    def loss(*args: jax.Array) -> jax.Array:
        terms = jax.tree.map(lambda y, t: jnp.sum(y * t), fn(*args), cotangents)
        return sum(jax.tree.leaves(terms))

    args = inputs(c)
    out = jax.jit(jax.grad(loss, argnums=tuple(range(len(args)))))(*args)
    return tuple(np.asarray(g) for g in out)


@functools.cache
def _reference_grads(name: str) -> tuple[np.ndarray, ...]:
    c = _REGISTRY[name]
    return grads(c.fn, c)


def reference_grads(c: Case) -> tuple[np.ndarray, ...]:
    """:func:`grads` of ``c.fn`` itself on one device (cached)."""
    return _reference_grads(c.name)


# -- HLO -------------------------------------------------------------------------------------

_COLLECTIVE = re.compile(
    r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(?P<shape>[^=]+?)\s+"
    r"(?P<kind>all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)(?:-start)?\(")


def collective_shapes(hlo: str) -> list[tuple[str, str]]:
    """(kind, result shape without layouts) of each collective in compiled HLO text."""
    found = []
    for line in hlo.splitlines():
        match = _COLLECTIVE.match(line)
        if match:
            found.append((match["kind"], re.sub(r"\{[^{}]*\}", "", match["shape"]).strip()))
    return found


def collective_counts(hlo: str) -> Counter[str]:
    """Collective kind -> how many instructions of it ``hlo`` holds."""
    return Counter(kind for kind, _ in collective_shapes(hlo))
