"""Control: x + jnp.full(x.shape, 2.0)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x * jnp.full(x.shape, 2.0)


def inputs():
    return (np.random.default_rng(95).standard_normal((4, 8)).astype(np.float32),)
