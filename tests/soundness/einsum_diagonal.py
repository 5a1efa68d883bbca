"""The diagonal of a square matrix whose two dims share a (split) name: jnp.einsum("ii->i", a)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=4, rules={"d": "model"})
def f(a: Tensor["d", "d"]) -> Tensor["d"]:
    return jnp.einsum("ii->i", a) * 2.0


def inputs():
    return (np.random.default_rng(147).standard_normal((8, 8)).astype(np.float32),)
