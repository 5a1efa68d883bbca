"""A module-level config instance holding an array (CFG.scale), used unnamed beside a batch-split activation."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"  # CFG.scale is an array with dims meshify cannot know


class Config:
    def __init__(self, scale):
        self.scale = scale


CFG = Config(jnp.arange(1.0, 9.0)[:, None])  # [8, 1]: one scale per example


@mesh(batch=8)
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x * CFG.scale


def inputs():
    return (np.random.default_rng(162).standard_normal((8, 4)).astype(np.float32),)
