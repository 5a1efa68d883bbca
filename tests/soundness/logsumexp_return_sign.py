"""jax.nn.logsumexp(x, axis=-1, b=w, return_sign=True) with signed weights over an unsplit dim of a batch-split array."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def f(x: Tensor["batch", "d"], w: Tensor["batch", "d"]) -> Tensor["batch"]:
    lse, sign = jax.nn.logsumexp(x, axis=-1, b=w, return_sign=True)
    return sign * jnp.exp(lse)


def inputs():
    rng = np.random.default_rng(426)
    return rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal((8, 4)).astype(np.float32)
