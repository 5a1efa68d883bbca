"""Control: float16 mean over a split dim of ordinary values."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.mean(x, axis=1)


def inputs():
    return (np.random.default_rng(50).standard_normal((4, 16)).astype(np.float16),)
