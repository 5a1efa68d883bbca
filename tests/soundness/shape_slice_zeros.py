"""jnp.zeros(x.shape[:1]) (a slice of a shape) beside a column of a batch-split array."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    bias = jnp.zeros(x.shape[:1]) + 1.0
    return x[:, 0] + bias


def inputs():
    return (np.random.default_rng(102).standard_normal((8, 4)).astype(np.float32),)
