"""Per-feature weights written as a literal, x * jnp.array([...]), with the feature dim split 4 ways (local size 1)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x * jnp.array([1.0, 2.0, 3.0, 4.0])


def inputs():
    return (np.random.default_rng(158).standard_normal((2, 4)).astype(np.float32),)
