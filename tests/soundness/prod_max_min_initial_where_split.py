"""jnp.prod/max/min with initial= and where=, sum with where= and keepdims over a split dim."""

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    a = jnp.prod(x, axis=1, initial=2.0, where=x > -0.5)
    b = jnp.max(x, axis=1, initial=0.3, where=x < 0.5)
    c = jnp.min(x, axis=1, initial=-0.2)
    d = jnp.sum(x, axis=1, where=x > 0, keepdims=True)[:, 0]
    return a + b + c + d


def inputs():
    rng = np.random.default_rng(3)
    return (rng.standard_normal((4, 16)).astype(np.float32) * 0.9 + 1.0,)
