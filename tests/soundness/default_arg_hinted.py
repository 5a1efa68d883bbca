"""A hinted parameter with an array default: b: Tensor["d"] = jnp.ones(8), called without b."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], b: Tensor["d"] = jnp.arange(8.0)) -> Tensor["batch", "d"]:
    return x + b


def inputs():
    return (np.random.default_rng(117).standard_normal((4, 8)).astype(np.float32),)
