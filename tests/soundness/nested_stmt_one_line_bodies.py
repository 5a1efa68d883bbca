"""One-line if / else / for / def bodies as real code writes them (if cfg.bias: x = x + b), one of
them needing a collective (it becomes an indented block with its comment)."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    bias: bool = True
    layers: int = 2


CFG = Config()


@mesh(batch=2, model=4, rules={"f": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "f"], w2: Tensor["f", "d"], b: Tensor["d"],
      cfg: Config = CFG) -> Tensor["batch", "d"]:
    def act(y): return jax.nn.gelu(y @ w1) @ w2
    h = x
    if cfg.bias: h = h + b
    else: h = h * 2.0
    for _ in range(cfg.layers): h = h + act(h)
    if not cfg.bias: return h
    return jnp.tanh(h)


def inputs():
    rng = np.random.default_rng(1410)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32) * 0.3,
            rng.standard_normal((16, 8)).astype(np.float32) * 0.3, rng.standard_normal((8,)).astype(np.float32))
