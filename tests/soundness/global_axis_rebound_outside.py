"""A module constant used as an axis, rebound from outside the module (``mod.AXIS = 0``, no ``global``
statement) between two calls: the rewrite took AXIS = 1 from the source and planned a psum of the split
dim it named; called again it summed the other dim locally, each device its own block (wrong numbers,
no error).  The
decorator rewrites the function for the value the constant holds now; a converted file, written for
the source's value, refuses the call (it cannot rewrite itself)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

AXIS = 1


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x * jnp.sum(jnp.tanh(x), axis=AXIS, keepdims=True)


def scenario(mod, pick):
    (x,) = inputs()
    mod.AXIS = 1
    first = pick(mod.f)(x)
    mod.AXIS = 0
    second = pick(mod.f)(x)
    mod.AXIS = 1
    return first, second, pick(mod.f)(x)


def inputs():
    return (np.random.default_rng(117).standard_normal((4, 8)).astype(np.float32),)
