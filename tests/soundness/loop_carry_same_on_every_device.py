"""Loop carries that start the same on every device and that the body returns as an array:
``jax.lax.scan(step, jnp.float32(0.0), xs)`` summing a split block (completed by a psum each step),
``jax.lax.fori_loop(0, n, body, jnp.zeros((B, D)))`` returning a split block.  The loop runs in the
layout the body returns, the initial carry sliced on its way in where that is split (both were
refused: "the scan carry changes layout in the loop body: static in", "opaque in")."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=4, model=2, rules={"batch": "data", "d": "model"})
def f(xs: Tensor["time", "batch", "d"], w: Tensor["d", "d"]):
    total, norms = jax.lax.scan(lambda c, x: (c + jnp.sum(jnp.tanh(x @ w) ** 2), jnp.sum(x)), jnp.float32(0.0), xs)
    sq = jax.lax.fori_loop(0, 3, lambda i, c: c + total * xs[i], jnp.zeros((8, 6)))
    return total + jnp.mean(norms) + jnp.mean(sq ** 2)


def inputs():
    rng = np.random.default_rng(41)
    return (rng.standard_normal((5, 8, 6)).astype(np.float32), 0.5 * rng.standard_normal((6, 6)).astype(np.float32))
