"""jnp.sum(x, axis=1, dtype=jnp.float32, keepdims=True) of a bfloat16 array over a split dim."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x.astype(jnp.float32) / jnp.sum(x, axis=1, dtype=jnp.float32, keepdims=True)


def inputs():
    rng = np.random.default_rng(738)
    return (rng.uniform(1.0, 2.0, (4, 8)).astype(jnp.bfloat16),)
