"""Row weights jnp.arange(8)[:, None] times x with batch (8) split 8 ways: local batch 1 broadcasts."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x * jnp.arange(8)[:, None]


def inputs():
    return (np.random.default_rng(93).standard_normal((8, 4)).astype(np.float32),)
