"""jnp.full_like(x, m) where m = jnp.sum(y, axis=0) is a partial sum over the split batch."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def f(x: Tensor["batch", "d"], y: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    m = jnp.sum(y, axis=0)
    return x + jnp.full_like(x, m)


def inputs():
    rng = np.random.default_rng(41)
    return rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal((8, 4)).astype(np.float32)
