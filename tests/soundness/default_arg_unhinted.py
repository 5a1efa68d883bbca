"""An unhinted parameter with an array default: b=jnp.arange(8.0), added to x with that dim split."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"  # b is a static by the contract, an array with dims meshify cannot know


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], b=jnp.arange(8.0)) -> Tensor["batch", "d"]:
    return x + b


def inputs():
    return (np.random.default_rng(118).standard_normal((4, 8)).astype(np.float32),)
