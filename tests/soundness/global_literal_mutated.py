"""A module constant rebound by a function after import (a training schedule), read by a @mesh function."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

SCALE = 2.0


def set_scale(value):
    global SCALE
    SCALE = value


@mesh(batch=8)
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return jnp.tanh(x) * SCALE


def scenario(mod, pick):
    (x,) = inputs()
    mod.set_scale(2.0)
    first = pick(mod.f)(x)
    mod.set_scale(5.0)
    return first, pick(mod.f)(x)


def inputs():
    return (np.random.default_rng(116).standard_normal((8, 4)).astype(np.float32),)
