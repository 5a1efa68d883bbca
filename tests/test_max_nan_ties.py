"""``jnp.max`` / ``jnp.min`` over split dims (``mr.max``: local max, ``pmax``) against ``jnp``'s own,
values and gradients, where the reduced values hold NaNs and ties spread over devices.

``jnp.max``'s derivative (reduce_max's JVP) sends the cotangent to the positions equal to the
result, divided by their count; a NaN result equals no position: 0 / 0, NaN over the whole
reduced group op by op (under jit XLA folds ``ct / 0 * 0`` to 0).  ``mr.max`` must give the same
on both (fuzz mismatch_0428dcbc: its JVP dropped the NaN, so the value under ``jax.grad`` was the
max of the other elements and the gradient went to that element).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from meshify.rewrite import convert_source

SOURCE = '''
import jax.numpy as jnp

from meshify import Tensor, mesh


@mesh(data=2, model=4, rules={"b": None, "n": ("data", "model")})
def rowmax(x: Tensor["b", "n"]) -> Tensor["b"]:
    return jnp.max(x, axis=-1)


@mesh(data=2, model=4, rules={"b": None, "n": ("data", "model")})
def rowmin(x: Tensor["b", "n"]) -> Tensor["b", "n"]:
    return x - jnp.min(x, axis=1, keepdims=True)


@mesh(data=2, model=4, rules={"b": None, "n": ("data", "model")})
def allmax(x: Tensor["b", "n"]) -> Tensor[()]:
    return jnp.max(x)
'''


def _inputs() -> np.ndarray:
    """Rows of 16 over 8 devices (2 each): ties across devices, a tie within a device, a NaN."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 16)).astype(np.float32)
    x[0, [1, 9, 14]] = 5.0           # a three-way tie on three devices
    x[0, [0, 8]] = -5.0              # and a tie for the min
    x[1, 3] = np.nan                 # NaN next to a larger value elsewhere
    x[1, 12] = 9.0
    x[2, [4, 5, 11]] = 7.0           # a tie within one device and across
    x[3, [6, 7]] = -3.0
    return x


def _import(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ModuleType]:
    tmp = tmp_path_factory.mktemp("maxnan")
    source = tmp / "maxnan_src.py"
    source.write_text(SOURCE)
    converted = tmp / "maxnan_conv.py"
    converted.write_text(convert_source(SOURCE, str(source)).text)
    return {"decorator": _import(source, "maxnan_src"), "converted": _import(converted, "maxnan_conv")}


def _loss(fn):
    return lambda x: jnp.sum(fn(x))


@pytest.mark.parametrize("path", ["decorator", "converted"])
@pytest.mark.parametrize("name", ["rowmax", "rowmin", "allmax"])
@pytest.mark.parametrize("jit", [True, False], ids=["jit", "op_by_op"])
def test_nan_and_ties_match_jnp(modules: dict[str, ModuleType], path: str, name: str, jit: bool) -> None:
    x = jnp.asarray(_inputs())
    want_fn = getattr(modules["decorator"], name).reference
    got_fn = getattr(modules[path], name)
    if jit:
        want = jax.jit(jax.value_and_grad(_loss(want_fn)))(x)
        got = jax.jit(jax.value_and_grad(_loss(got_fn)))(x)
        value = jax.jit(got_fn)(x)
    else:
        with jax.disable_jit():
            want = jax.value_and_grad(_loss(want_fn))(x)
            got = jax.value_and_grad(_loss(got_fn))(x)
            value = got_fn(x)
    np.testing.assert_array_equal(np.asarray(value), np.asarray(want_fn(x)))
    np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))
    np.testing.assert_allclose(np.asarray(got[1]), np.asarray(want[1]), rtol=1e-6, atol=0)


def test_the_inputs_exercise_nan_and_ties(modules: dict[str, ModuleType]) -> None:
    """The cases above mean something: the max has a NaN row and tied rows, and jnp's gradient
    shares ties (1/3) and is NaN op by op on the NaN row."""
    x = jnp.asarray(_inputs())
    with jax.disable_jit():
        grad = np.asarray(jax.grad(_loss(modules["decorator"].rowmax.reference))(x))
    assert np.isnan(grad[1]).all()
    np.testing.assert_allclose(grad[0, [1, 9, 14]], 1 / 3)
    np.testing.assert_allclose(grad[2, [4, 5, 11]], 1 / 3)
