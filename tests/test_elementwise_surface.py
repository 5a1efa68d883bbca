"""Every elementwise function meshify registers (``_signatures.UNARY``/``BINARY``/``STATS``), run sharded.

Each one is applied to an array split over both axes of a 2x4 mesh (and, for two operands,
beside a second array split the same way) through the decorator, and compared with
``.reference``; what a function does to each element must not depend on where it sits.
A sample runs by default (``pytest.mark.slow``: set ``MESHIFY_SLOW=1`` for all).
"""

from __future__ import annotations

import importlib.util
import sys

import jax.numpy as jnp
import numpy as np
import pytest

from meshify.rewrite._signatures import BINARY, REFUSED_ELEMENTWISE, STATS, UNARY

#: Functions of integers (bit operations, gcd): their operands are ints.
INTEGER = ("gcd", "lcm", "shift", "bitwise", "invert", "clz", "population_count", "mulhi")
#: Functions of a float and an integer (an exponent, an order), in that order or the other.
FLOAT_INT = ("jax.numpy.ldexp",)
INT_FLOAT: tuple[str, ...] = ()
#: Functions of booleans.
BOOLEAN = ("logical_",)
#: Functions of complex numbers only (jnp's real/imag/conj take real numbers too).
COMPLEX = ("jax.lax.real", "jax.lax.imag")


def _kind(name: str) -> str:
    short = name.rsplit(".", 1)[1]
    if name in COMPLEX:
        return "complex"
    if name in FLOAT_INT or name in INT_FLOAT:
        return "float_int" if name in FLOAT_INT else "int_float"
    if any(short.startswith(b) for b in BOOLEAN):
        return "bool"
    return "int" if any(k in short for k in INTEGER) else "float"


def _module(tmp_path, name: str, arity: int):
    module_path, _, short = name.rpartition(".")
    params = ", ".join(f'x{i}: Tensor["rows", "cols"]' for i in range(arity))
    args = ", ".join(f"x{i}" for i in range(arity))
    source = (f"import {module_path.split('.')[0]}\nimport {module_path}\nfrom meshify import Tensor, mesh\n\n\n"
              f'@mesh(data=2, model=4, rules={{"rows": "data", "cols": "model"}})\n'
              f'def f({params}) -> Tensor["rows", "cols"]:\n    return {module_path}.{short}({args})\n')
    stem = "ew_" + name.replace(".", "_")
    path = tmp_path / f"{stem}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[stem] = module
    spec.loader.exec_module(module)
    return module


def _inputs(kind: str, arity: int):
    rng = np.random.default_rng(0)
    if kind == "int":
        return [jnp.asarray(rng.integers(1, 9, (4, 8)), jnp.int32) for _ in range(arity)]
    if kind in ("float_int", "int_float"):
        pair = [jnp.asarray(rng.uniform(0.2, 0.9, (4, 8)), jnp.float32), jnp.asarray(rng.integers(1, 4, (4, 8)),
                                                                                     jnp.int32)]
        return pair if kind == "float_int" else pair[::-1]
    if kind == "bool":
        return [jnp.asarray(rng.integers(0, 2, (4, 8)).astype(bool)) for _ in range(arity)]
    if kind == "complex":
        return [jnp.asarray(rng.uniform(0.2, 0.9, (4, 8)) + 1j * rng.uniform(-1, 1, (4, 8)), jnp.complex64)
                for _ in range(arity)]
    return [jnp.asarray(rng.uniform(0.2, 0.9, (4, 8)), jnp.float32) for _ in range(arity)]


CASES = [(name, 1) for name in sorted(UNARY)] + [(name, 2) for name in sorted(BINARY)] + [
    (name, sum(1 for p in params.split(",") if "=" not in p)) for name, params in sorted(STATS.items())]


@pytest.mark.slow
@pytest.mark.parametrize("name, arity", CASES, ids=[c[0] for c in CASES])
def test_elementwise_function_runs_sharded(tmp_path, name: str, arity: int) -> None:
    module = _module(tmp_path, name, arity)
    args = _inputs(_kind(name), arity)
    got, want = module.f(*args), module.f.reference(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=1e-5, atol=1e-6,
                               equal_nan=True)


#: Functions the scan below finds acting elementwise on its probes, that are not elementwise functions of
#: arrays: shape helpers, identities of pytrees, data-dependent shapes, polynomial arithmetic (coefficient
#: arrays of one length happen to add elementwise), set membership (the second array is a set), ``unwrap``
#: (a running correction along an axis, none on smooth probes), sorting of one row, optional-argument forms
#: (scipy's ``zeta`` with ``q=None``), and selectors taking any number of cases.
NOT_ELEMENTWISE = frozenset({
    "jax.numpy.atleast_1d", "jax.numpy.atleast_2d", "jax.numpy.block", "jax.numpy.from_dlpack", "jax.numpy.isin",
    "jax.numpy.polyadd", "jax.numpy.polysub", "jax.numpy.polyval", "jax.numpy.trim_zeros", "jax.numpy.unwrap",
    "jax.lax.broadcast_like", "jax.lax.optimization_barrier", "jax.lax.random_gamma_grad", "jax.lax.select_n",
    "jax.lax.sort", "jax.lax.stack", "jax.lax.stage", "jax.scipy.special.zeta",
})


def _acts_elementwise(fn, arity: int) -> bool:
    """Whether ``fn`` of ``arity`` arrays (float, complex, int or bool probes) gives, on a block of its
    operands, that block of its result: what makes a function elementwise, read off JAX itself."""
    import warnings

    for kind in ("float", "complex", "int", "bool"):
        xs = [x[:, :6] for x in _inputs(kind, arity)]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                whole, block = fn(*xs), fn(*(x[1:3, 2:5] for x in xs))
        except Exception:  # noqa: BLE001 - a probe the function does not take
            continue
        if getattr(whole, "shape", None) == (4, 6) and getattr(block, "shape", None) == (2, 3) and np.allclose(
                np.asarray(whole)[1:3, 2:5], np.asarray(block), rtol=1e-5, atol=1e-6, equal_nan=True):
            return True
    return False


@pytest.mark.slow
def test_every_elementwise_function_of_jax_has_a_rule() -> None:
    """The table is JAX's whole elementwise surface: each public function of jax.numpy, jax.lax, jax.nn and
    jax.scipy.special that acts elementwise on one or two arrays is in UNARY/BINARY (or has a rule of its own),
    so an elementwise call is never refused with a fix that unsplits a dim."""
    import inspect

    import jax
    import jax.scipy.special

    from meshify.rewrite.rules import REGISTRY

    known = set(UNARY) | set(BINARY) | set(STATS) | set(REGISTRY) | NOT_ELEMENTWISE | set(REFUSED_ELEMENTWISE)
    missing = []
    for module_name, module in (("jax.numpy", jnp), ("jax.lax", jax.lax), ("jax.nn", jax.nn),
                                ("jax.scipy.special", jax.scipy.special)):
        for short in sorted(n for n in dir(module) if not n.startswith("_")):
            fn, name = getattr(module, short), f"{module_name}.{short}"
            if name in known or not callable(fn) or (inspect.isclass(fn) and not isinstance(fn, jnp.ufunc)):
                continue
            if _acts_elementwise(fn, 1) or _acts_elementwise(fn, 2):
                missing.append(name)
    assert not missing, ("elementwise functions without a rule: add each to meshify/_unary.py (UNARY) or "
                         f"meshify/rewrite/_signatures.py (BINARY), or to NOT_ELEMENTWISE with why: {missing}")


def test_an_elementwise_function_meshify_cannot_run_on_a_block_says_why_not_unsplit(tmp_path) -> None:
    """``jax.scipy.special.exp1`` is elementwise, but its loop fails shard_map's check on a block: refused with
    that reason and the fix of calling it outside, never the "no rule" fix of unsplitting a dim."""
    from meshify.errors import UnsupportedError

    module = _module(tmp_path, "jax.scipy.special.exp1", 1)
    with pytest.raises(UnsupportedError) as raised:
        module.f(*_inputs("float", 1))
    message = str(raised.value)
    assert "is elementwise" in message and "outside the @mesh function" in message and "rules=" not in message
