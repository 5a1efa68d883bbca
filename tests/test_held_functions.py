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
