"""jnp.sum(x, axis=1, where=mask) over an unsplit dim of a batch-split array."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def f(x: Tensor["batch", "d"], mask: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.sum(x, axis=1, where=mask)


def inputs():
    rng = np.random.default_rng(37)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    return x, x > -0.3
