"""jnp.linalg.norm(x, axis=-1, keepdims=True) over an unsplit dim (row normalisation), batch split."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x / jnp.linalg.norm(x, axis=-1, keepdims=True)


def inputs():
    rng = np.random.default_rng(508)
    return (rng.standard_normal((8, 4)).astype(np.float32),)
