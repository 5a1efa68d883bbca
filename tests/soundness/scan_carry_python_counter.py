"""A Python number in a loop carry, as code counts steps: ``jax.lax.scan(body, (x, 0), ws)`` whose body
returns ``n + 1``, and ``fori_loop(0, 3, body, (x, 0.0))`` adding a split-batch sum to a float; JAX traces
both numbers as 0-d arrays.  Before, "the scan carry changes layout: (..., static) in, (..., static) out"
(found by the user-style attack)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], ws: Tensor["layers", "d", "d"]):
    def body(carry, w):
        h, n = carry
        return (jnp.tanh(h @ w) + n * 0.01, n + 1), None

    (h, n), _ = jax.lax.scan(body, (x, 0), ws)

    def step(i, carry):
        g, total = carry
        return g * 0.5, total + jnp.sum(g * g)

    g, total = jax.lax.fori_loop(0, 3, step, (h, 0.0))
    return g, n, total


def inputs():
    rng = np.random.default_rng(315)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((3, 8, 8)).astype(np.float32) * 0.3
