"""Literal-shape constants beside x [8, 8] with only batch split: jnp.arange(8) aligns with d, jnp.ones((8, 1)) with batch."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    col = jnp.arange(8) * 1.0
    row = jnp.arange(8).reshape(8, 1) * 10.0
    return x + col + row * jnp.ones((8, 1))


def inputs():
    return (np.random.default_rng(160).standard_normal((8, 8)).astype(np.float32),)
