"""jnp.var(ddof=1, where=), jnp.std(correction=1.5), jnp.nanvar over a split dim."""

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], m: Tensor["batch", "d"]) -> Tensor["batch"]:
    a = jnp.var(x, axis=1, ddof=1, where=m > 0)
    b = jnp.std(x, axis=-1, correction=1.5)
    c = jnp.nanvar(jnp.where(m > 1.0, jnp.nan, x), axis=1)
    return a + b + c


def inputs():
    rng = np.random.default_rng(1)
    return rng.standard_normal((4, 16)).astype(np.float32), rng.standard_normal((4, 16)).astype(np.float32)
