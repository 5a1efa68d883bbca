"""Builds, runs and checks the op corpus on simulated devices.

For one case, one mesh and one rule set, :func:`build` writes the case's source under
a filled-in ``@mesh(...)`` decorator to a module file and imports it (the decorator
path), converts that file with :func:`meshify.rewrite.convert_source` and imports the
result (the converted-file path).  Both are cached, so a mesh sweep pays for each
rewrite and each XLA compile once (while it runs: the cache is small, to bound memory).

Inputs come from a seeded generator per case, sized by :data:`SIZES` (every split size a
multiple of 8, so that every mesh divides it): float32 arrays for ``Tensor``-hinted
parameters, and what a case's ``args`` says for the others (:class:`Ids` for lookup
indices, :class:`Key` for PRNG keys, :class:`Floats` for another dtype, :class:`Static`
for static arguments); a parameter hinted with a NamedTuple class gets an instance of it
built from its fields' hints.  A case's ``support`` (classes and helper functions of the
cases module) is written into the generated module before the function.

Results are compared with ``rtol=1e-5`` and an ``atol`` of ``1e-5`` times the magnitude of
the reference (at least 1): a sharded sum reassociates, and its rounding error scales
with its terms.  Lower-precision values (bfloat16 results, or any result of a case whose
``precision`` says it computes in bfloat16) get two bfloat16 epsilons instead; cases
marked ``exact`` (random draws) must be bit-identical.
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
import pytest

from meshify.annotate import TensorHint
from meshify.rewrite import convert_source

__all__ = [
    "ALL_MESHES",
    "HEADER",
    "MESHES",
    "PATHS",
    "RTOL",
    "SAMPLED_MESH",
    "SIZES",
    "Built",
    "Case",
    "Floats",
    "Ids",
    "Key",
    "Static",
    "assert_close",
    "build",
    "case",
    "check_gradients",
    "check_outputs_and_gradients",
    "check_reference",
    "collective_counts",
    "collective_shapes",
    "differentiable",
    "grads",
    "header_module",
    "inputs",
    "mesh_rules",
    "outputs_and_grads",
    "reference",
    "reference_grads",
    "registry",
    "sweep",
]

#: Every generated module starts with these imports; the aliases check that ops are
#: matched by qualified name, however they were imported.
HEADER = """\
from typing import NamedTuple

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

#: Dim name -> global size.  Multiples of 8 where a mesh may split them, distinct where dims
#: meet in a contraction.  ``heads * d_head == d_qkv`` (reshapes split and merge them);
#: ``layers`` (scanned over) and ``qkv`` (stacked projections) are never split.
SIZES = {"batch": 16, "length": 24, "kv_length": 16, "seq": 24, "d_model": 32, "d_ff": 48, "heads": 8,
         "d_head": 4, "vocab": 40, "d_qkv": 32, "layers": 3, "qkv": 3}

RTOL = 1e-5
ATOL = 1e-5

#: The mesh every case always runs on (with its first rule set); the rest of a sweep is slow.
SAMPLED_MESH = "2x4"
PATHS = ("decorator", "converted")


# -- what each parameter is given ---------------------------------------------------------------


@dataclass(frozen=True)
class Floats:
    """Normal values of scale 0.5 in ``dtype``: the default for a ``Tensor``-hinted parameter.

    ``on_device``: a ``jax.Array`` instead of a numpy array (for code that indexes it with a
    traced index, as a ``fori_loop`` body does; numpy arrays cannot be).
    """

    dtype: str = "float32"
    on_device: bool = False


@dataclass(frozen=True)
class Ids:
    """Integer indices in ``[0, SIZES[bound])`` (lookup ids, labels), shaped by the hint."""

    bound: str


@dataclass(frozen=True)
class Key:
    """A typed PRNG key, ``jax.random.key(seed)``, for a ``Tensor[()]`` parameter."""

    seed: int = 0


@dataclass(frozen=True)
class Static:
    """A static argument (a parameter without a ``Tensor`` hint), passed as given."""

    value: object


Input = Floats | Ids | Key | Static


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
        args: parameter name -> what it is given, where not :class:`Floats` (see :func:`inputs`).
        support: classes and helper functions of the cases module the function uses, in the
            order the generated module needs them.
        exact: results must be bit-identical to the reference (random draws).
        precision: the lowest float type the case computes in; results and gradients are
            compared within its tolerance (mixed precision: ``"bfloat16"``).
    """

    fn: Callable[..., Any]
    rules: tuple[str, ...]
    grad: bool = False
    meshes: tuple[str, ...] = ALL_MESHES
    xfail: dict[tuple[str, ...], str] = field(default_factory=dict)
    args: dict[str, Input] = field(default_factory=dict)
    support: tuple[object, ...] = ()
    exact: bool = False
    precision: str = "float32"

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
         xfail: dict[tuple[str, ...], str] | None = None, args: dict[str, Input] | None = None,
         support: Sequence[object] = (), exact: bool = False,
         precision: str = "float32") -> Callable[[Callable], Callable]:
    """Registers a corpus function; returns it unchanged."""

    def register(fn: Callable) -> Callable:
        assert fn.__name__ not in _REGISTRY, f"duplicate case {fn.__name__}"
        params = inspect.signature(fn).parameters
        assert set(args or {}) <= set(params), f"{fn.__name__}: args for unknown parameters"
        _REGISTRY[fn.__name__] = Case(fn, tuple(rules), grad, tuple(meshes), dict(xfail or {}), dict(args or {}),
                                      tuple(support), exact, precision)
        return fn

    return register


def registry(module: ModuleType | None = None) -> dict[str, Case]:
    """Every registered case, by name; only those of ``module`` when given (import it first)."""
    return {name: c for name, c in _REGISTRY.items() if module is None or c.fn.__module__ == module.__name__}


# -- sources and modules -----------------------------------------------------------------


def mesh_rules(rules: dict[str, object], mesh: str) -> dict[str, object]:
    """``rules`` restricted to the axes of ``mesh`` (a tuple losing all its axes maps to None)."""
    axes = MESHES[mesh]
    out: dict[str, object] = {}
    for dim, target in rules.items():
        kept = tuple(a for a in ((target,) if isinstance(target, str) else target or ()) if a in axes)
        out[dim] = None if not kept else kept[0] if len(kept) == 1 else kept
    return out


def function_source(fn: Callable | type) -> str:
    """``fn``'s (a function's or a class's) source without its decorators, dedented."""
    lines = textwrap.dedent(inspect.getsource(fn)).splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(("def ", "class ")))
    return "".join(lines[start:])


def module_source(fn: Callable, mesh: str, rules: dict[str, object], support: Sequence[object] = ()) -> str:
    """A module holding ``support``, then ``fn`` under ``@mesh(<mesh axes>, rules=<rules>)``."""
    axes = ", ".join(f"{name}={size}" for name, size in MESHES[mesh].items())
    defined = "".join(f"\n\n{function_source(s)}" for s in support)  # type: ignore[arg-type]
    return f"{HEADER}{defined}\n\n@mesh({axes}, rules={mesh_rules(rules, mesh)!r})\n{function_source(fn)}"


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
    text = module_source(c.fn, mesh, rules, c.support)
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


def _is_struct(hint: object) -> bool:
    """A NamedTuple class whose fields carry hints (a pytree parameter)."""
    return isinstance(hint, type) and issubclass(hint, tuple) and hasattr(hint, "_fields")


def _value(rng: np.random.Generator, hint: object, given: Input) -> Any:
    """One argument: ``given`` made concrete for a parameter hinted ``hint``."""
    if isinstance(given, Static):
        return given.value
    if isinstance(given, Key):
        return jax.random.key(given.seed)
    if _is_struct(hint):
        assert isinstance(given, Floats), f"{hint.__name__} parameters take Floats, got {given!r}"
        return hint(*(_value(rng, h, given) for h in hint.__annotations__.values()))
    shape = tuple(SIZES[d] for d in _dims(hint))
    if isinstance(given, Ids):
        return rng.integers(0, SIZES[given.bound], shape).astype(np.int32)
    values = (0.5 * rng.standard_normal(shape)).astype(jnp.dtype(given.dtype))
    return jnp.asarray(values) if given.on_device else values


def _params(c: Case) -> list[inspect.Parameter]:
    return list(inspect.signature(c.fn).parameters.values())


def inputs(c: Case) -> tuple[Any, ...]:
    """Seeded inputs for ``c``, one per parameter: see the module docstring."""
    rng = np.random.default_rng(zlib.crc32(c.name.encode()))
    return tuple(_value(rng, p.annotation, c.args.get(p.name, Floats())) for p in _params(c))


def differentiable(c: Case) -> list[str]:
    """The parameters gradients are taken in: floating-point arrays and pytrees of them."""
    return [p.name for p in _params(c) if isinstance(c.args.get(p.name, Floats()), Floats)]


@functools.cache
def _reference(name: str) -> Any:
    c = _REGISTRY[name]
    return jax.tree.map(np.asarray, c.fn(*inputs(c)))


def reference(c: Case) -> Any:
    """``c.fn`` on :func:`inputs` on one device, as numpy (cached)."""
    return _reference(c.name)


def _tolerance(*dtypes: Any) -> float:
    """``RTOL``, or two epsilons of the least precise of ``dtypes`` (bfloat16: 1.6e-2)."""
    return max(RTOL, *(2 * float(jnp.finfo(d).eps) for d in dtypes))


def assert_close(actual: Any, expected: Any, what: str = "", exact: bool = False,
                 precision: str = "float32") -> None:
    """Same structure, shapes and dtypes; values within ``RTOL`` and a magnitude-scaled ``ATOL``.

    ``exact``: values bit-identical instead.  ``precision``: the least precise float type
    the values went through, which widens both tolerances (see :func:`_tolerance`).
    """
    actual_leaves, actual_tree = jax.tree.flatten(actual)
    expected_leaves, expected_tree = jax.tree.flatten(expected)
    assert actual_tree == expected_tree, f"{what}: structure {actual_tree} != {expected_tree}"
    for i, (a, e) in enumerate(zip(actual_leaves, expected_leaves)):
        a, e = np.asarray(a), np.asarray(e)
        label = f"{what}[{i}]" if len(expected_leaves) > 1 else what
        assert a.shape == e.shape, f"{label}: shape {a.shape} != {e.shape}"
        assert a.dtype == e.dtype, f"{label}: dtype {a.dtype} != {e.dtype}"
        if exact or e.dtype == np.bool_ or np.issubdtype(e.dtype, np.integer):
            np.testing.assert_array_equal(a, e, err_msg=label)
            continue
        rtol = _tolerance(e.dtype, precision)
        atol = ATOL * rtol / RTOL  # ATOL, widened like rtol for lower-precision types
        scale = max(1.0, float(np.max(np.abs(e.astype(np.float64)), initial=0.0)))
        np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol * scale,
                                   err_msg=label)


def _cotangents(c: Case) -> Any:
    rng = np.random.default_rng(zlib.crc32(c.name.encode()) + 1)
    return jax.tree.map(lambda r: rng.standard_normal(np.shape(r)).astype(np.float32), reference(c))


def outputs_and_grads(fn: Callable[..., Any], c: Case) -> tuple[Any, dict[str, Any]]:
    """``fn(*inputs)`` and the gradients of ``sum(fn(*inputs) * cotangent)``, from one jitted program.

    Gradients (parameter -> gradient) are taken in the :func:`differentiable` parameters;
    the others (ids, keys, static values) are held fixed.
    """
    cotangents = _cotangents(c)
    args = inputs(c)
    names = [p.name for p in _params(c)]
    wrt = [names.index(n) for n in differentiable(c)]

    def loss(*varied: Any) -> tuple[jax.Array, Any]:
        full = list(args)
        for i, v in zip(wrt, varied):
            full[i] = v
        outputs = fn(*full)
        terms = jax.tree.map(lambda y, t: jnp.sum(y * t), outputs, cotangents)
        return sum(jax.tree.leaves(terms)), outputs

    program = jax.jit(jax.value_and_grad(loss, argnums=tuple(range(len(wrt))), has_aux=True))
    (_, outputs), out = program(*(args[i] for i in wrt))
    return jax.tree.map(np.asarray, outputs), {names[i]: jax.tree.map(np.asarray, g) for i, g in zip(wrt, out)}


def grads(fn: Callable[..., Any], c: Case) -> dict[str, Any]:
    """The gradients of :func:`outputs_and_grads`: parameter -> gradient."""
    return outputs_and_grads(fn, c)[1]


@functools.cache
def _reference_grads(name: str) -> dict[str, Any]:
    c = _REGISTRY[name]
    return grads(c.fn, c)


def reference_grads(c: Case) -> dict[str, Any]:
    """:func:`grads` of ``c.fn`` itself on one device (cached)."""
    return _reference_grads(c.name)


# -- the sweep ---------------------------------------------------------------------------------


def sweep(cases: dict[str, Case], paths: Sequence[str] = PATHS, always: Sequence[str] = PATHS,
          sampled_only: bool = False) -> list[Any]:
    """One pytest param per case, rule set, mesh and path, id ``name-rules-mesh-path``.

    Slow unless on :data:`SAMPLED_MESH` with the case's first rule set and a path in
    ``always`` (``sampled_only``: only those); a case's ``xfail`` entries become
    ``xfail(strict=True)``.
    """
    params = []
    for c in cases.values():
        for rules in c.rules:
            for mesh in c.meshes:
                for path in paths:
                    sampled = mesh == SAMPLED_MESH and rules == c.rules[0] and path in always
                    if sampled_only and not sampled:
                        continue
                    marks = [] if sampled else [pytest.mark.slow]
                    reason = c.xfail_reason(mesh, rules, path)
                    if reason:
                        marks.append(pytest.mark.xfail(strict=True, reason=reason))
                    params.append(pytest.param(c.name, mesh, rules, path, marks=marks,
                                               id=f"{c.name}-{rules}-{mesh}-{path}"))
    return params


def _where(c: Case, mesh: str, rules: str, path: str) -> str:
    return f"{c.name} on {mesh} with rules {rules!r} ({path})"


def _program(c: Case, built: Built, path: str) -> Any:
    if path == "decorator":
        # .reference is the untouched function: the corpus function's code, run on one device.
        assert built.decorated.reference.__code__.co_code == c.fn.__code__.co_code
    return built.program(path)


def check_reference(c: Case, built: Built, mesh: str, rules: str, path: str) -> None:
    """``c`` built on ``mesh`` with ``rules``, called directly, matches its reference through ``path``."""
    assert_close(_program(c, built, path)(*inputs(c)), reference(c), _where(c, mesh, rules, path), exact=c.exact,
                 precision=c.precision)


def _assert_grads_close(actual: dict[str, Any], c: Case, where: str) -> None:
    expected = reference_grads(c)
    assert actual.keys() == expected.keys()
    for name in expected:
        assert_close(actual[name], expected[name], f"d/d{name} of {where}", precision=c.precision)


def check_gradients(c: Case, built: Built, mesh: str, rules: str, path: str) -> None:
    """Gradients through ``c`` built on ``mesh`` with ``rules`` match single-device ones."""
    _assert_grads_close(grads(built.program(path), c), c, _where(c, mesh, rules, path))


def check_outputs_and_gradients(c: Case, built: Built, mesh: str, rules: str, path: str) -> None:
    """:func:`check_reference` and :func:`check_gradients` at the price of one compiled program.

    The outputs come from the jitted gradient program (the sharded function traced inside
    it), not from a direct call, which places its inputs itself.
    """
    outputs, actual = outputs_and_grads(_program(c, built, path), c)
    where = _where(c, mesh, rules, path)
    assert_close(outputs, reference(c), where, exact=c.exact, precision=c.precision)
    _assert_grads_close(actual, c, where)


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
