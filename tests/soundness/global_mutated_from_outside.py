"""A module constant set from outside the module (mod.TEMPERATURE = ...), read by a @mesh function
and by a helper it calls: each call sees the current value, as .reference does."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

TEMPERATURE = 1.0


def scaled(x):
    return x / TEMPERATURE


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return jax.nn.softmax(scaled(x), axis=-1)


def scenario(mod, pick):
    (x,) = inputs()
    mod.TEMPERATURE = 1.0
    first = pick(mod.f)(x)
    mod.TEMPERATURE = 0.25
    return first, pick(mod.f)(x)


def inputs():
    return (np.random.default_rng(7).standard_normal((4, 8)).astype(np.float32),)
