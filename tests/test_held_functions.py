"""Functions as values (README, The user's contract): held in names, chosen, looked up in tables, or held
in static values.  The numerics are soundness cases (functions_held_in_names, functions_in_static_values);
here, what a function meshify cannot check is told at the call."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from meshify.errors import MeshifyError

PROGRAM = '''\
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


def swish(x):
    return x * jax.nn.sigmoid(x)


class Config(NamedTuple):
    act: Callable = swish


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], cfg: Config = Config()):
    return jnp.sum(cfg.act(x @ w1))
'''


def _load(tmp_path: Path):
    path = tmp_path / "held.py"
    path.write_text(textwrap.dedent(PROGRAM))
    spec = importlib.util.spec_from_file_location(f"held_{tmp_path.name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_a_function_a_config_holds_is_checked_when_traced(tmp_path: Path) -> None:
    """``cfg.act(h)`` on a split block is taken for an elementwise function of one array; a module def
    there (which meshify would have to rewrite) is an error naming it, when JAX traces the call."""
    module = _load(tmp_path)
    assert "mr.elementwise(cfg.act)(x @ w1)" in module.f.source
    x, w1 = np.ones((4, 8), np.float32), np.ones((8, 16), np.float32)
    with pytest.raises(MeshifyError, match="swish.*elementwise function of one array") as info:
        module.f(x, w1)
    assert "call a module-level def by its name" in str(info.value)
    import jax

    assert float(module.f(x, w1, module.Config(jax.nn.gelu))) == pytest.approx(
        float(module.f.reference(x, w1, module.Config(jax.nn.gelu))), rel=1e-5)


MODULE_OBJECT = '''\
import types

import jax
import jax.numpy as jnp
from meshify import Tensor, mesh

CFG = types.SimpleNamespace(act=jax.nn.silu)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"]):
    return jnp.sum(CFG.act(x @ w1) ** 2)
'''


def test_a_function_an_object_of_the_module_holds_is_read_at_each_call(tmp_path: Path) -> None:
    """``CFG.act(h)``, ``CFG`` a module-level object: checked when traced, as a static's, and the program
    is keyed on the function it holds, so ``CFG.act = ...`` later builds the program again (it was
    refused; taken as it held at the first call, a later change would silently differ from .reference)."""
    import jax
    import jax.numpy as jnp

    path = tmp_path / "module_object.py"
    path.write_text(MODULE_OBJECT)
    spec = importlib.util.spec_from_file_location(f"module_object_{tmp_path.name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    assert "mr.elementwise(CFG.act)(x @ w1)" in module.f.source
    rng = np.random.default_rng(0)
    x, w1 = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)
    for act in (jax.nn.silu, jnp.tanh, jax.nn.gelu):
        module.CFG.act = act
        assert float(module.f(x, w1)) == pytest.approx(float(module.f.reference(x, w1)), rel=1e-5), act
    module.CFG.act = lambda t: t * 2.0
    with pytest.raises(MeshifyError, match="elementwise function of one array"):
        module.f(x, w1)
