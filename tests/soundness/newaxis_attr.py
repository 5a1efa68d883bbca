"""x[:, jnp.newaxis] (the attribute spelling of None) on a batch-split array, then a broadcast product."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2)
def f(x: Tensor["batch", "d"], w: Tensor["e", "d"]) -> Tensor["batch", "e"]:
    return jnp.sum(x[:, jnp.newaxis] * w, axis=-1)


def inputs():
    rng = np.random.default_rng(99)
    return rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)
