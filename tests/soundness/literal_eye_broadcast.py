"""x + jnp.eye(8, 4) with x [8, 4] batch-split 8 ways (local batch 1, so the constant broadcasts)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x + jnp.eye(8, 4)


def inputs():
    return (np.random.default_rng(157).standard_normal((8, 4)).astype(np.float32),)
