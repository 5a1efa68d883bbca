"""jnp.cumsum(x, axis=1) over an unsplit dim of a batch-split array."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return jnp.cumsum(x, axis=1)


def inputs():
    rng = np.random.default_rng(897)
    return (rng.standard_normal((8, 4)).astype(np.float32),)
