"""A module-level array only reduced to a scalar (jnp.sum(W)) and used as a scale: needs no dims."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

W = jnp.linspace(0.0, 1.0, 16).reshape(4, 4)


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x * jnp.sum(W)


def inputs():
    return (np.random.default_rng(114).standard_normal((4, 8)).astype(np.float32),)
