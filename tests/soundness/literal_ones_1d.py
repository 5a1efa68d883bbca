"""x * jnp.ones(8) with x's last dim (8) split."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x * jnp.ones(8)


def inputs():
    return (np.random.default_rng(91).standard_normal((4, 8)).astype(np.float32),)
