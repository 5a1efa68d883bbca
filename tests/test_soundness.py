"""The soundness promise, attacked with programs written the way users write them.

Promise: a sharded program never silently differs from ``.reference``.  Every program
either matches ``.reference`` (allclose, same shape, same dtype, same NaN/inf positions,
gradients included) or is refused with a :class:`meshify.errors.MeshifyError` (at rewrite
time or at call time); never a wrong number, a wrong shape, a crash inside meshify
(TypeError, KeyError, ...) or a raw JAX error from generated code.

Each case is one module under ``tests/soundness/`` (files starting with ``_`` are not
cases).  A case module holds its ``@mesh`` function(s) and:

- ``EXPECT = "match"`` or ``"error"``: what a correct meshify must do.  ``"match"`` for
  every meaningful program meshify ought to support; ``"error"`` only where refusing is
  the right behaviour (the program cannot be sharded as written).
- ``inputs()``: the example arguments of ``f`` (a tuple), or ``{name: args}`` for several
  ``@mesh`` functions of the module.
- optionally ``scenario(mod, pick)``: a custom run (methods, closures, several calls)
  returning a pytree of outputs; ``pick(fn)`` is ``fn.reference`` for the reference run
  and ``fn`` itself for the sharded run.  ``mod`` is the module the program comes from.
- optionally ``GRAD = False`` (no gradient check) and ``TOL`` (an absolute tolerance
  relative to the magnitude of the reference, for low-precision cases).

Each case runs through two paths: ``decorator`` (the case file imported as it is, its
``@mesh`` functions rewritten on first call) and ``converted`` (the file converted with
:func:`meshify.rewrite.convert_source`, the generated module imported from ``tmp_path``).
The reference is always the original module's ``.reference``.  Where the program is
differentiable (float array arguments with a hint), ``jax.grad`` of the sum of its float
outputs is compared too.

Cases that break the promise today (or refuse a program they ought to run) are listed in
:data:`XFAIL` with what goes wrong, and run as ``xfail(strict=True)``: when meshify is fixed
the test flips and the entry must go.
"""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import re
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from meshify.errors import MeshifyError
from meshify.rewrite import convert_source

HERE = Path(__file__).resolve().parent / "soundness"
CASES = sorted(p.stem for p in HERE.glob("*.py") if not p.name.startswith("_"))
PATHS = ("decorator", "converted")
PACKAGE = str(Path(__file__).resolve().parent.parent / "meshify")

#: case -> why it fails today on both paths, or "case:path" -> why it fails on that path.
#: Kept in sync with reality by xfail(strict=True).
XFAIL: dict[str, str] = {
    # -- the promise broken: wrong numbers, wrong shapes, crashes --------------------------------------
    # -- refused since the soundness work (were wrong numbers or shapes); ought to run ----------------
    "closure_scalar_factory:converted": "REFUSED MSH040: a converted file cannot know what a closure's eps holds",
    "closure_unnamed:converted": "REFUSED MSH040: a converted file cannot know what a closure's W holds",
    "closure_shadows_constant:converted": "REFUSED MSH040: a converted file cannot know what a closure's SCALE holds",
    "global_axis_rebound_outside:converted": "REFUSED MSH050: the converted file was written for AXIS = 1 (its "
                                             "value in the source); rebound from outside, the call is refused",
    "helper_user_decorator": "REFUSED MSH030: a helper under a user's decorator is not specialised",
    # -- refused with a MeshifyError: the promise is kept, but these programs ought to run ------------
    "array_of_partial_sums_of_two_dtypes": "REFUSED MSH050: a join of float32-formed partial sums of different "
                                           "dtypes (mr.joined_dtype); each item ought to be completed before it",
    "loop_over_partial_sums_of_two_dtypes": "REFUSED MSH030: a loop over partial sums of two dtypes, completed in the "
                                            "body (one like= for every item; was float32 for the bfloat16 item)",
    "literal_eye": "REFUSED MSH040: cannot infer the dims of jnp.eye(8), an operand of @",
}

#: Cases whose converted-path variant is marked slow (compile-heavy); see tests/conftest.py.
SLOW_CONVERTED: set[str] = set()
#: The converted path writes the module out: helpers' versions, imports, globals, closures, nested
#: defs and wrapped helpers are where it has differed from the decorator path, so cases about those
#: run it always; every other case's converted variant is in the slow sample (the decorator path runs
#: the same rewrite).
CONVERTED_ALWAYS = re.compile(r"helper|global|import|closure|default|mesh_calls|method|nested|lambda|jit|vmap|"
                              r"checkpoint|custom|namedtuple|decorat|struct|module|rebound|rebinds")

_names = itertools.count()


# -- loading ---------------------------------------------------------------------------------------


def _import(path: Path) -> Any:
    name = f"meshify_soundness_{path.stem}_{next(_names)}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # TypedDict/dataclass machinery looks modules up by name
    spec.loader.exec_module(module)
    return module


def _calls(case: Any) -> dict[str, tuple]:
    """``inputs()`` by function name; numpy arrays become jax arrays, so that the reference has
    jax's semantics (indexing clamps, where numpy would raise), as users call it."""
    args = case.inputs()
    calls = dict(args) if isinstance(args, dict) else {"f": tuple(args)}
    return jax.tree.map(lambda a: jnp.asarray(a) if isinstance(a, np.ndarray) else a, calls)


def _run(case: Any, mod: Any, reference: bool, calls: dict[str, tuple]) -> Any:
    def pick(fn):
        return fn.reference if reference else fn

    if hasattr(case, "scenario"):
        return case.scenario(mod, pick)
    return {name: pick(getattr(mod, name))(*args) for name, args in calls.items()}


# -- comparing -------------------------------------------------------------------------------------


class Mismatch(AssertionError):
    pass


def _is_float(x: Any) -> bool:
    return hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jnp.inexact)


def _compare(actual: Any, expected: Any, what: str, tol: float | None) -> None:
    a_leaves, a_tree = jax.tree.flatten(actual)
    e_leaves, e_tree = jax.tree.flatten(expected)
    if a_tree != e_tree and str(a_tree) != str(e_tree):  # (a NamedTuple class of each import of the case: by name)
        raise Mismatch(f"{what}: structure {a_tree} != {e_tree}")
    for path, a, e in zip(jax.tree_util.tree_flatten_with_path(expected)[0], a_leaves, e_leaves):
        label = f"{what}{jax.tree_util.keystr(path[0])}"
        a, e = np.asarray(a), np.asarray(e)
        if a.shape != e.shape:
            raise Mismatch(f"{label}: shape {a.shape} != reference {e.shape}")
        if a.dtype != e.dtype:
            raise Mismatch(f"{label}: dtype {a.dtype} != reference {e.dtype}")
        if not jnp.issubdtype(e.dtype, jnp.inexact):  # (bfloat16 is not np.inexact)
            if not np.array_equal(a, e):
                bad = np.argwhere(a != e)[:3].tolist()
                raise Mismatch(f"{label}: integer values differ at {bad}: got {a[tuple(np.array(bad).T)]} "
                               f"want {e[tuple(np.array(bad).T)]}")
            continue
        a64, e64 = a.astype(np.float64), e.astype(np.float64)
        if not np.array_equal(np.isnan(a64), np.isnan(e64)):
            raise Mismatch(f"{label}: NaN positions differ: got {int(np.isnan(a64).sum())} NaNs, reference "
                           f"{int(np.isnan(e64).sum())}; got {_sample(a64)} want {_sample(e64)}")
        finite = np.isfinite(e64)
        if not np.array_equal(a64[~finite & ~np.isnan(e64)], e64[~finite & ~np.isnan(e64)]) \
                or not np.array_equal(np.isinf(a64), np.isinf(e64)):
            raise Mismatch(f"{label}: inf positions differ: got {_sample(a64)} want {_sample(e64)}")
        rtol = max(1e-5, 2 * float(jnp.finfo(e.dtype).eps))
        scale = max(1.0, float(np.max(np.abs(e64[finite]), initial=0.0)))
        atol = (tol if tol is not None else rtol) * scale
        diff = np.abs(np.where(finite, a64, 0.0) - np.where(finite, e64, 0.0))
        bad = finite & (diff > atol + rtol * np.abs(e64))
        if bad.any():
            i = tuple(np.argwhere(bad)[0])
            raise Mismatch(f"{label}: {int(bad.sum())} of {bad.size} values differ (max abs diff "
                           f"{float(diff[finite].max()):.4g}); e.g. at {list(i)}: got {a64[i]:.6g} want {e64[i]:.6g}")


def _sample(x: np.ndarray) -> str:
    return np.array2string(x.reshape(-1)[:6], precision=4)


def _differentiable(case: Any, mod: Any, name: str, args: tuple) -> list[int]:
    """Positional arguments to differentiate: hinted parameters holding float arrays (or pytrees of them)."""
    params = list(inspect.signature(getattr(mod, name).reference).parameters.values())
    out = []
    for i, (p, a) in enumerate(zip(params, args)):
        leaves = jax.tree.leaves(a)
        if p.annotation is not inspect.Parameter.empty and leaves and all(_is_float(x) for x in leaves) \
                and all(not isinstance(x, (float, int)) for x in leaves):
            out.append(i)
    return out


def _grads(fn: Any, args: tuple, wrt: list[int], jit: bool) -> Any:
    def loss(*varied):
        full = list(args)
        for i, v in zip(wrt, varied):
            full[i] = v
        leaves = [y for y in jax.tree.leaves(fn(*full)) if _is_float(y)]
        return sum(jnp.sum(y.astype(jnp.float32)) for y in leaves)

    g = jax.grad(loss, argnums=tuple(range(len(wrt))))
    return (jax.jit(g) if jit else g)(*(args[i] for i in wrt))


# -- outcomes --------------------------------------------------------------------------------------


def _where(error: BaseException) -> str:
    """The innermost frame in meshify (file:line) and in generated code, for a crash."""
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if f.filename.startswith(PACKAGE)]
    generated = [f for f in frames if f.filename.startswith("<meshify") or f.filename.endswith("_sharded.py")
                 or Path(f.filename).parent == HERE]
    parts = []
    if ours:
        f = ours[-1]
        parts.append(f"meshify/{f.filename[len(PACKAGE) + 1:]}:{f.lineno} in {f.name}")
    if generated:
        f = generated[-1]
        parts.append(f"user/generated {Path(f.filename).name}:{f.lineno}: {f.line}")
    return "; ".join(parts) or "no meshify frame"


def _outcome(error: BaseException) -> tuple[str, str]:
    if isinstance(error, MeshifyError):
        return "error", f"{error.code}: {error.headline}"
    if isinstance(error, Mismatch):
        return "mismatch", str(error)
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return "crash", f"{type(error).__name__}: {first[:300]} [{_where(error)}]"


def _check(case: Any, program_mod: Any, original: Any) -> tuple[str, str]:
    """Runs the case's program (from ``program_mod``) against ``original``'s references."""
    calls = _calls(case)
    tol = getattr(case, "TOL", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # unhashable statics: rebuilt per call, by design
        expected = _run(case, original, True, calls)
        try:
            actual = _run(case, program_mod, False, calls)
            _compare(actual, expected, "output", tol)
        except Exception as e:  # noqa: BLE001 - classified below
            return _outcome(e)
        if hasattr(case, "scenario") or not getattr(case, "GRAD", True):
            return "match", ""
        for name, args in calls.items():
            wrt = _differentiable(case, original, name, args)
            if not wrt or not any(_is_float(y) for y in jax.tree.leaves(expected[name])):
                continue
            want = _grads(getattr(original, name).reference, args, wrt, jit=False)
            try:
                got = _grads(getattr(program_mod, name), args, wrt, jit=True)
                _compare(got, want, f"grad of {name} in args {wrt}", tol)
            except Exception as e:  # noqa: BLE001
                kind, detail = _outcome(e)
                return kind, f"(gradient) {detail}"
    return "match", ""


def _case_outcome(name: str, path: str, tmp_path: Path) -> tuple[Any, str, str]:
    source = HERE / f"{name}.py"
    original = _import(source)
    if path == "decorator":
        return original, *_check(original, _import(source), original)
    try:
        text = convert_source(source.read_text(), str(source)).text
    except Exception as e:  # noqa: BLE001
        kind, detail = _outcome(e)
        return original, kind, f"(convert) {detail}"
    generated = tmp_path / f"{name}_sharded.py"
    generated.write_text(text)
    try:
        converted = _import(generated)
    except Exception as e:  # noqa: BLE001
        kind, detail = _outcome(e)
        return original, kind, f"(import of the converted file) {detail}"
    if not hasattr(original, "scenario"):
        # A converted function's .reference imports the original file again: the same untouched code.
        try:
            for function in _calls(original):
                ref = inspect.unwrap(getattr(converted, function).reference)  # a def under jax.jit: the def
                assert ref.__code__.co_code == inspect.unwrap(getattr(original, function).reference).__code__.co_code, \
                    function
        except Exception as e:  # noqa: BLE001
            kind, detail = _outcome(e)
            return original, kind, f"(.reference of the converted file) {detail}"
    return original, *_check(original, converted, original)


class Unexpected(AssertionError):
    """The case's outcome is not its EXPECT; the subclass says which outcome it was instead."""


class GotMatch(Unexpected):
    pass


class GotError(Unexpected):
    pass


class GotMismatch(Unexpected):
    pass


class GotCrash(Unexpected):
    pass


_RAISED = {"match": GotMatch, "error": GotError, "mismatch": GotMismatch, "crash": GotCrash}

#: An XFAIL reason's first word -> the failure it pins: a case failing another way fails loudly.
_PINNED = {"REFUSED": GotError, "WRONG": GotMismatch, "CRASH": GotCrash}


def _pinned(reason: str) -> type[Unexpected] | None:
    return _PINNED.get(reason.split()[0].rstrip(":"))


def _param(name: str, path: str):
    marks = []
    reason = XFAIL.get(f"{name}:{path}") or XFAIL.get(name)
    if reason:
        marks.append(pytest.mark.xfail(strict=True, reason=reason, raises=_pinned(reason)))
    if path == "converted" and (name in SLOW_CONVERTED or not CONVERTED_ALWAYS.search(name)):
        marks.append(pytest.mark.slow)
    return pytest.param(name, path, marks=marks, id=f"{name}-{path}")


@pytest.mark.parametrize("name,path", [_param(n, p) for n in CASES for p in PATHS])
def test_soundness(name: str, path: str, tmp_path: Path) -> None:
    case, kind, detail = _case_outcome(name, path, tmp_path)
    expect = case.EXPECT
    assert expect in ("match", "error"), f"{name}: EXPECT must be 'match' or 'error', not {expect!r}"
    if kind != expect:
        raise _RAISED[kind](f"{name} ({path}): expected {expect}, got {kind}: {detail}")


def test_cases_are_well_formed() -> None:
    assert len(CASES) >= 40
    for name in CASES:
        text = (HERE / f"{name}.py").read_text()
        assert "@mesh(" in text and "EXPECT = " in text and "def inputs(" in text, name
    for key, reason in XFAIL.items():
        assert _pinned(reason), f"XFAIL reason of {key!r} must start with one of {list(_PINNED)}"
        assert key.split(":")[0] in CASES, f"XFAIL entry {key!r} names no case"
        assert ":" not in key or key.split(":")[1] in PATHS, key
    assert SLOW_CONVERTED <= set(CASES)


def test_the_comparison_sees_every_kind_of_difference() -> None:
    x = np.array([1.0, np.nan, np.inf], np.float32)
    _compare({"f": x}, {"f": x.copy()}, "same", None)
    for actual, why in [(x[:2], "shape"), (x.astype(np.float16), "dtype"), (np.array([1.0, 2.0, np.inf], np.float32),
                                                                          "NaN"),
                        (np.array([1.0, np.nan, 5.0], np.float32), "inf"),
                        (np.array([1.001, np.nan, np.inf], np.float32), "values differ")]:
        with pytest.raises(Mismatch, match=why):
            _compare({"f": actual}, {"f": x}, "output", None)
    with pytest.raises(Mismatch, match="structure"):
        _compare((x,), {"f": x}, "output", None)
    with pytest.raises(Mismatch, match="structure"):  # a list returned as a tuple
        _compare((x, x), [x, x], "output", None)
