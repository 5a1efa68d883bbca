"""A module-level helper with an array default argument (b=jnp.arange(8.0)), called without it on a split array."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def add_bias(x, b=jnp.arange(8.0)):
    return x + b


@mesh(model=8, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return add_bias(x)


def inputs():
    return (np.random.default_rng(161).standard_normal((2, 8)).astype(np.float32),)
