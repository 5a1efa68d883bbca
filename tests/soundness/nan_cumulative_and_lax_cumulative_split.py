"""cumsum with dtype=, cumprod, lax.cummax reverse, jnp.nancumsum, lax.cumlogsumexp along a split dim."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    a = jnp.cumsum(x, axis=1, dtype=jnp.float32)
    b = jnp.cumprod(1.0 + 0.1 * x, axis=-1)
    c = jax.lax.cummax(x, axis=1, reverse=True)
    d = jnp.nancumsum(x, axis=1)
    e = jax.lax.cumlogsumexp(x, axis=1)
    return a + b + c + d + e


def inputs():
    rng = np.random.default_rng(5)
    return (rng.standard_normal((4, 16)).astype(np.float32),)
