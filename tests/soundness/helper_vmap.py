"""A @jax.vmap helper normalising each row by its own sum, called on a batch-split array."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@jax.vmap
def normalize(row):
    return row / jnp.sum(row)


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return normalize(jnp.exp(x))


def inputs():
    return (np.random.default_rng(136).standard_normal((4, 8)).astype(np.float32),)
