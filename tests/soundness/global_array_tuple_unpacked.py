"""Module-level arrays bound by tuple unpacking (W, S = init()), S used unnamed beside a batch-split array."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"  # S has dims meshify cannot know: name them, or refuse


def init():
    return jnp.ones((4, 4)), jnp.arange(1.0, 9.0)[:, None]


W, S = init()


@mesh(batch=8)
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x * S


def inputs():
    return (np.random.default_rng(123).standard_normal((8, 4)).astype(np.float32),)
