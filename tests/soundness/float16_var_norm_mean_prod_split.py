"""float16 var, norm, mean of squares and prod over a split dim (large values)."""

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.var(x, axis=1) + jnp.linalg.norm(x, axis=1) + jnp.mean(x * x, axis=-1) + jnp.prod(x, axis=1)


def inputs():
    rng = np.random.default_rng(7)
    return ((rng.standard_normal((4, 64)) * 30 + 20).astype(np.float16),)
