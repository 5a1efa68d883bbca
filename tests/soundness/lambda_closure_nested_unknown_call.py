"""A nested def whose lambda closes over the enclosing function's split weight (w over d_ff), passed to
jax.lax.map, which meshify does not model: refused (inside the nested def w is a closure's name, which
the check did not read: JAX's replication check failed in the generated code)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(model=8, rules={"d_ff": "model"})
def f(x: Tensor["n", "d"], w: Tensor["d", "d_ff"]) -> Tensor["n"]:
    def features(h):
        return jax.lax.map(lambda r: jnp.tanh(r @ w), h)

    return jnp.sum(features(x), axis=1)


def inputs():
    rng = np.random.default_rng(1434)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)
