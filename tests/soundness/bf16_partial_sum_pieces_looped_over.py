"""bfloat16 partial sums (formed in float32) looped over piece by piece: `for t in jnp.split(x @ w, 2, axis=0)` and
a tuple literal, accumulated from a Python 0.0, and summed by a generator; each completed sum is cast back to bfloat16
(the fuzz found a float32 result where the loop's pieces lost their dtype)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["e"]:
    h = x @ w
    acc = 0.0
    for t in jnp.split(h, 2, axis=0):
        acc = acc + t
    rows = 0.0
    for r in (h * 0.5, h):
        rows = rows + r.sum(0)
    total = sum(t * 0.5 for t in jnp.split(h, 2, axis=0))
    return acc.sum(0) * 0.5 + rows + total.sum(0)


def inputs():
    rng = np.random.default_rng(3504)
    return (rng.standard_normal((4, 8)).astype(jnp.bfloat16), rng.standard_normal((8, 6)).astype(jnp.bfloat16))
