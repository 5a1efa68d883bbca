"""jnp.full_like(x, s) where s = jnp.sum(h) is a partial sum (h's summed dim is split)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    s = jnp.sum(x)
    return jnp.full_like(x, s)


def inputs():
    return (np.random.default_rng(40).standard_normal((4, 8)).astype(np.float32),)
