"""A module constant used as an axis and rebound by a function (global AXIS): meshify cannot rely
on its value when it plans the collectives, so it refuses, pointing at the axis."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"

AXIS = 1


def use_rows():
    global AXIS
    AXIS = 0


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.sum(x, axis=AXIS)


def inputs():
    return (np.ones((4, 8), np.float32),)
