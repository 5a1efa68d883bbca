"""jnp.linalg.norm over a split dim with every vector ord users write: 2, 1, 3, 0, jnp.inf, -jnp.inf."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return (jnp.linalg.norm(x, axis=-1) + jnp.linalg.norm(x, 1, axis=1) + jnp.linalg.norm(x, ord=3, axis=1)
            + jnp.linalg.norm(x, jnp.inf, axis=1) - jnp.linalg.norm(x, -jnp.inf, axis=1)
            + jnp.linalg.norm(x, 0, axis=1))


def inputs():
    rng = np.random.default_rng(7008)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    x[0, 1] = 0.0
    return (x,)
