"""Results of other layouts returned from inside a Python loop (``for i in range(n): if i == stop:
return h``): which one returns depends on the loop, not on a parameter, so meshify refuses."""

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"], stop: int = 1):
    h = jnp.tanh(x @ w)
    for i in range(3):
        if i == stop:
            return h
        h = h * 2
    return h.sum(-1)


def inputs():
    rng = np.random.default_rng(0)
    return rng.normal(size=(8, 16)).astype(np.float32), rng.normal(size=(16, 32)).astype(np.float32)
