"""jnp.linalg.norm of orders 1, inf, -inf, 3, 0 and vector_norm over a split dim, and the whole norm."""

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    a = jnp.linalg.norm(x, ord=1, axis=1)
    b = jnp.linalg.norm(x, ord=jnp.inf, axis=-1)
    c = jnp.linalg.norm(x, ord=-jnp.inf, axis=1)
    d = jnp.linalg.norm(x, ord=3, axis=1)
    e = jnp.linalg.norm(x, ord=0, axis=1)
    g = jnp.linalg.vector_norm(x, ord=2, axis=1)
    return a + b + c + d + e + g + jnp.linalg.norm(x)


def inputs():
    rng = np.random.default_rng(2)
    return (rng.standard_normal((4, 16)).astype(np.float32),)
