"""Helper defaults built with literal shapes (jnp.zeros((1, 8)), np.full((8,), 0.5), jnp.arange(1.0, 9.0)):
whole arrays whose entries line up with the other operand's dims by position, as jnp.zeros((4, 8)) in a
body does; sliced where that dim is split over 'model'."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def shift(x, b=jnp.zeros((1, 8))):
    return x + b


def affine(x, b=np.full((8,), 0.5, dtype=np.float32), c=jnp.arange(1.0, 9.0)):
    return x * b - c


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return shift(x) + affine(x)


def inputs():
    return (np.random.default_rng(167).standard_normal((4, 8)).astype(np.float32),)
