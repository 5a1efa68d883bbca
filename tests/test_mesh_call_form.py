"""``mesh(...)(f)``, as ``jax.jit(f)`` is written: a top-level def with no decorator rewritten as if
``@mesh(...)`` stood on it, its ``.reference`` the plain def (still callable, unsharded); ``convert`` refuses
the call form with a fix, since the file it writes would not show the collectives."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from meshify.errors import MeshifyError
from meshify.rewrite import convert_source

PROGRAM = '''\
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh

dot = jnp.dot


def loss(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]):
    h = jax.nn.gelu(dot(x, w1))
    return jnp.mean((h @ w2 - x) ** 2)


sharded_loss = mesh(batch=2, model=4, rules={"d_ff": "model"})(loss)
grad_fn = jax.jit(jax.grad(sharded_loss, argnums=(1, 2)))


def make():
    def inner(x: Tensor["batch", "d"]):
        return x * 2.0

    return mesh(batch=2, model=4)(inner)
'''


def _load(tmp_path: Path, text: str = PROGRAM):
    path = tmp_path / "called.py"
    path.write_text(textwrap.dedent(text))
    spec = importlib.util.spec_from_file_location(f"called_{tmp_path.name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module, path


def _inputs():
    rng = np.random.default_rng(3603)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 8)).astype(np.float32))


def test_a_def_wrapped_by_a_mesh_call_is_rewritten(tmp_path: Path) -> None:
    module, _ = _load(tmp_path)
    args = _inputs()
    assert "mr.psum" in module.sharded_loss.source  # the split d_ff contraction completed, in the source shown
    assert float(module.sharded_loss(*args)) == pytest.approx(float(module.loss(*args)), rel=1e-5)
    assert float(module.sharded_loss.reference(*args)) == pytest.approx(float(module.loss(*args)), rel=1e-6)
    import jax

    want = jax.grad(module.loss, argnums=(1, 2))(*args)
    for got, ref in zip(module.grad_fn(*args), want):
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-4, atol=1e-5)


def test_a_nested_def_wrapped_by_a_mesh_call_is_refused_with_a_fix(tmp_path: Path) -> None:
    module, _ = _load(tmp_path)
    with pytest.raises(MeshifyError, match="cannot find the @mesh definition of make.<locals>.inner") as info:
        module.make()(np.ones((4, 8), np.float32))
    assert "mesh(...)(f) on a top-level def" in str(info.value)


def test_convert_refuses_the_call_form_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "called.py"
    path.write_text(PROGRAM)
    with pytest.raises(MeshifyError) as info:
        convert_source(PROGRAM, str(path))
    text = str(info.value)
    assert f"{path}:13:16" in text and "write @mesh(batch=2, model=4, rules={\"d_ff\": \"model\"}) above def loss" in text
