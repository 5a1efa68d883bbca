"""A function held in a static value, as config-driven model code writes it: ``cfg.act(h)`` (a NamedTuple
config field holding ``functools.partial(jax.nn.gelu, approximate=False)``), ``act(h)`` (a parameter
defaulting to ``jax.nn.silu``), ``getattr(jax.nn, cfg.activation)`` and ``getattr(jax.nn, GATE)`` (a
module constant), on split blocks and on a partial sum (completed first), and on a whole
array (called as written).  Before, each split call was "cfg.act has no meshify rule"."""
import functools
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GATE = "sigmoid"


class Config(NamedTuple):
    act: Callable = functools.partial(jax.nn.gelu, approximate=False)
    scale: float = 0.5
    activation: str = "tanh"


CFG = Config()


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"], b: Tensor["d"], cfg: Config = CFG,
      act=jax.nn.silu):
    h = cfg.act(x @ w1)
    c: Tensor["d"] = cfg.act(b)  # a whole array: called as written (no dims inferred for an unknown function)
    y = act(h @ w2) * cfg.scale + c
    y = getattr(jax.nn, cfg.activation)(y) + getattr(jax.nn, GATE)(y)
    return jnp.mean(y ** 2) + jnp.mean(act(x))


def inputs():
    rng = np.random.default_rng(45)
    return (rng.standard_normal((4, 8)).astype(np.float32), 0.3 * rng.standard_normal((8, 16)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32))
