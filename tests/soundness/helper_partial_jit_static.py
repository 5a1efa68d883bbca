"""A functools.partial(jax.jit, static_argnums=1) helper with a static power, on split operands."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@functools.partial(jax.jit, static_argnums=1)
def power_sum(x, p):
    return jnp.sum(x ** p, axis=-1)


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return power_sum(x, 2) + power_sum(x, 3)


def inputs():
    return (np.random.default_rng(133).standard_normal((4, 8)).astype(np.float32),)
