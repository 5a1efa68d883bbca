"""A module constant SCALE = 2.0, later rebound to an array (a config loaded at import time)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"  # SCALE is an array with unnamed dims when f runs

SCALE = 2.0


@mesh(batch=8)
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x * SCALE


SCALE = jnp.arange(1.0, 9.0)[:, None]  # [8, 1], one scale per example


def inputs():
    return (np.random.default_rng(115).standard_normal((8, 4)).astype(np.float32),)
