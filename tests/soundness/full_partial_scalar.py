"""jnp.full(x.shape, s) where s = jnp.sum(x) is a partial sum."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    s = jnp.sum(x)
    return x * jnp.full(x.shape, s)


def inputs():
    return (np.random.default_rng(42).standard_normal((4, 8)).astype(np.float32),)
