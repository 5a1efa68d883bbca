"""jax.vmap(helper)(x) at the call site: a per-row helper mapped over the batch."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def normalize(row):
    return row / jnp.sum(row)


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return jax.vmap(normalize)(jnp.exp(x))


def inputs():
    return (np.random.default_rng(137).standard_normal((4, 8)).astype(np.float32),)
