"""A Python loop over a tuple of a bfloat16 and a float32 partial sum, each summed: one like= cannot serve both items (the union gave the bfloat16 item float32, a silent wrong dtype); refused until each iteration is completed with its own item's dtype."""

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], y: Tensor["batch", "d"], v: Tensor["d", "e"]):
    pair = (x @ w, y @ v)
    outs = []
    for t in pair:
        outs.append(jnp.sum(t, axis=0))
    return outs[0], outs[1]


def inputs():
    rng = np.random.default_rng(3505)
    return (
        rng.standard_normal((4, 8)).astype(jnp.bfloat16),
        rng.standard_normal((8, 6)).astype(jnp.bfloat16),
        rng.standard_normal((4, 8)).astype(np.float32),
        rng.standard_normal((8, 6)).astype(np.float32),
    )
