"""jnp.sum(x, axis=1, where=mask[None, :]) over an unsplit dim with a broadcast mask, batch split."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def f(x: Tensor["batch", "d"], mask: Tensor["d"]) -> Tensor["batch"]:
    return jnp.sum(x, axis=1, where=mask[None, :])


def inputs():
    rng = np.random.default_rng(583)
    return rng.standard_normal((8, 4)).astype(np.float32), np.array([True, False, True, True])
