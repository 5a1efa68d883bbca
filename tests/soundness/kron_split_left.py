"""``jnp.kron(a, b)`` with ``a`` split along its rows (a block of a's rows is a block of the result's) and
partial over a contraction, ``b`` split too (taken whole: its blocks would interleave); vectors and
matrices; gradients through both.  Before, "jnp.kron has no meshify rule"."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"rows": "data", "k": "model", "small": "model"})
def f(x: Tensor["rows", "k"], w: Tensor["k", "cols"], s: Tensor["small", "two"], v: Tensor["rows"],
      u: Tensor["small"]):
    a = x @ w  # a partial sum over split k
    big = jnp.kron(a, s)
    vec = jnp.kron(v, u)
    return jnp.mean(jnp.tanh(big) ** 2) + jnp.mean(vec ** 2)


def inputs():
    rng = np.random.default_rng(107)
    return (rng.standard_normal((4, 8)).astype(np.float32), 0.3 * rng.standard_normal((8, 3)).astype(np.float32),
            rng.standard_normal((4, 2)).astype(np.float32), rng.standard_normal((4,)).astype(np.float32),
            rng.standard_normal((4,)).astype(np.float32))
