"""A static config object (hashable by identity) whose field changes between two calls."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config:
    def __init__(self, temperature):
        self.temperature = temperature


@mesh(batch=8)
def f(x: Tensor["batch", "d"], cfg: Config) -> Tensor["batch", "d"]:
    return jnp.tanh(x / cfg.temperature)


def scenario(mod, pick):
    (x,) = inputs()
    cfg = mod.Config(1.0)
    first = pick(mod.f)(x, cfg)
    cfg.temperature = 4.0
    return first, pick(mod.f)(x, cfg)


def inputs():
    return (np.random.default_rng(153).standard_normal((8, 4)).astype(np.float32),)
