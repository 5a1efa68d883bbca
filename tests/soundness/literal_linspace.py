"""A ramp from jnp.linspace(0, 1, 8) times x with that dim split."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x * jnp.linspace(0.0, 1.0, 8)


def inputs():
    return (np.random.default_rng(159).standard_normal((4, 8)).astype(np.float32),)
