"""x[jnp.newaxis] with x's second dim split, summed back over the new axis."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=4, rules={"d": "model"})
def f(x: Tensor["n", "d"]) -> Tensor["n", "d"]:
    return jnp.sum(x[jnp.newaxis] * 2.0, axis=0)


def inputs():
    return (np.random.default_rng(100).standard_normal((3, 8)).astype(np.float32),)
