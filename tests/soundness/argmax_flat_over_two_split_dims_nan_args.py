"""argmax/argmin without axis of an array split along two dims (a flat index), nanargmax with an all-NaN row (-1), count_nonzero, any/all with where=."""

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]):
    a = jnp.argmax(x)
    b = jnp.argmin(x, axis=0)
    c = jnp.count_nonzero(x > 0.2, axis=1, keepdims=True)
    d = jnp.count_nonzero(x > 0)
    e = jnp.any(x > 2.0, axis=1, where=x < 3.0)
    g = jnp.all(x > -3.0)
    h = jnp.nanargmax(jnp.where(x > 1.0, jnp.nan, x), axis=1)
    k = jnp.nanargmin(jnp.where(x > 1.0, jnp.nan, x))
    n = jnp.argmax(jnp.where(x > 8.0, jnp.nan, x))
    return a, b, c, d, e, g, h, k, n


def inputs():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    x[1, 3] = x[1, 12] = 9.0
    x[2, :] = 5.0
    y = x.copy()
    y[0, 13] = np.nan
    return {"f": (x,), "g": (y,)}


@mesh(batch=2, model=4, rules={"d": ("model", "batch")})
def g(x: Tensor["n", "d"]):
    return jnp.argmin(x), jnp.nanargmax(x, keepdims=True)
