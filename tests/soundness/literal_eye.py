"""x @ jnp.eye(8) and x + jnp.eye(4)[0] with x's dims split."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x @ jnp.eye(8) + 1.0


def inputs():
    return (np.random.default_rng(96).standard_normal((4, 8)).astype(np.float32),)
