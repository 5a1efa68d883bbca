"""``jnp.cumsum``, ``jax.lax.cumsum(reverse=True)``, ``jnp.cumprod`` and ``jax.lax.cummax(reverse=True)`` along a
dim split over all 8 devices (1x8), in float16: the local scans combined with the all-gathered shard totals
(``mr.cumulative``), to float16's precision, gradients included (the 2x4 float32 forms: ops_along_split_dims,
nan_cumulative_and_lax_cumulative_split)."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


@mesh(batch=1, model=8, rules={"length": "model"})
def f(x: Tensor["batch", "length"]):
    return (jnp.cumsum(x, axis=1), jax.lax.cumsum(x, axis=1, reverse=True), jnp.cumprod(1.0 + 0.05 * x, axis=1),
            jax.lax.cummax(x, axis=1, reverse=True))


def inputs():
    return (np.random.default_rng(38).normal(size=(2, 16)).astype(np.float16),)
