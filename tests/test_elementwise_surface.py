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

from meshify.rewrite._signatures import BINARY, STATS, UNARY

#: Functions of integers (bit operations, gcd): their operands are ints.
INTEGER = ("gcd", "lcm", "shift", "bitwise", "invert", "clz", "population_count")
#: Functions of booleans.
BOOLEAN = ("logical_",)
#: Functions of complex numbers only (jnp's real/imag/conj take real numbers too).
COMPLEX = ("jax.lax.real", "jax.lax.imag")


def _kind(name: str) -> str:
    short = name.rsplit(".", 1)[1]
    if name in COMPLEX:
        return "complex"
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
