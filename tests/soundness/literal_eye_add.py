"""x + jnp.eye(4): a square literal constant beside a batch-split square array."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2)
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x + jnp.eye(4)


def inputs():
    return (np.random.default_rng(97).standard_normal((4, 4)).astype(np.float32),)
