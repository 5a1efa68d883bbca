"""jax.lax.cond on a traced predicate (a global sum, reduced first), lambda branches of different
layouts: one returns a partial sum (h @ w2 over a split d_ff), the other zeros."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    h = jnp.tanh(x @ w1)
    y = jax.lax.cond(jnp.sum(x) > 0, lambda h: h @ w2, lambda h: jnp.zeros_like(x), h)
    z = jax.lax.cond(jnp.sum(x) < 0, lambda h: h @ w2, lambda h: jnp.zeros_like(x), h)
    return x + y + 2.0 * z


def inputs():
    rng = np.random.default_rng(1401)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    return (x - x.mean() + 0.1, 0.3 * rng.standard_normal((8, 16)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8)).astype(np.float32))
