"""Pairwise differences x[:, None] - x[None, :] of a batch-split vector (both dims named 'batch')."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def f(x: Tensor["batch"]) -> Tensor["batch"]:
    return jnp.sum(jnp.abs(x[:, None] - x[None, :]), axis=1)


def inputs():
    return (np.random.default_rng(149).standard_normal((16,)).astype(np.float32),)
