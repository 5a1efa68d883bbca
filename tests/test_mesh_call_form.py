"""``mesh(...)(f)``, as ``jax.jit(f)`` is written; module aliases of jax functions (``dot = jnp.dot``) rebound
from outside. ``mesh(...)(f)``: a top-level def with no decorator rewritten as if
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


ALIASED = '''\
import jax.numpy as jnp
from meshify import Tensor, mesh

dot = jnp.dot


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]):
    return dot(dot(x, w1), w2)
'''


def test_an_alias_rebound_from_outside_is_not_called_by_the_old_rule(tmp_path: Path) -> None:
    """``dot = jnp.dot`` is called by jnp.dot's rule; rebound from outside (``mod.dot = other``), the
    decorator rewrites the function again reading ``dot`` as what it holds (here a function meshify cannot
    see into: refused on split blocks), and a converted file refuses the call naming the name."""
    module, path = _load(tmp_path, ALIASED)
    x, w1, w2 = _inputs()
    np.testing.assert_allclose(np.asarray(module.f(x, w1, w2)), np.asarray(module.f.reference(x, w1, w2)),
                               rtol=1e-5, atol=1e-5)
    module.dot = lambda a, b: 2.0 * (a @ b)
    with pytest.raises(MeshifyError, match="dot"):
        module.f(x, w1, w2)
    module.dot = __import__("jax").numpy.dot
    np.testing.assert_allclose(np.asarray(module.f(x, w1, w2)), np.asarray(module.f.reference(x, w1, w2)),
                               rtol=1e-5, atol=1e-5)

    converted = tmp_path / "aliased_sharded.py"
    converted.write_text(convert_source(ALIASED, str(path)).text)
    assert 'aliases={"dot": "jax.numpy.dot"}' in converted.read_text()
    spec = importlib.util.spec_from_file_location(f"aliased_sharded_{tmp_path.name}", converted)
    out = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = out
    spec.loader.exec_module(out)
    np.testing.assert_allclose(np.asarray(out.f(x, w1, w2)), np.asarray(module.f.reference(x, w1, w2)),
                               rtol=1e-5, atol=1e-5)
    out.dot = lambda a, b: 2.0 * (a @ b)
    with pytest.raises(MeshifyError, match="module name 'dot' holds .* now; meshify rewrote the function calling "
                                           "it as jax.numpy.dot") as info:
        out.f(x, w1, w2)
    assert "regenerate the file" in str(info.value)
