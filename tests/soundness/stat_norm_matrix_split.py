"""Matrix norms of a matrix split along both dims: 'fro', 1, -1, inf, -inf and the default (axis=None)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor[()]:
    return (jnp.linalg.norm(x, "fro") + jnp.linalg.norm(x, 1) + jnp.linalg.norm(x, -1)
            + jnp.linalg.norm(x, jnp.inf) * 2 + jnp.linalg.norm(x, -jnp.inf, axis=(1, 0)) + jnp.linalg.norm(x))


def inputs():
    rng = np.random.default_rng(7009)
    return (rng.standard_normal((4, 8)).astype(np.float32),)
