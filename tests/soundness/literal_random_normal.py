"""Noise from jax.random.normal(key, (8,)) (literal shape) added to x with that dim split."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], key: Tensor[()]) -> Tensor["batch", "d"]:
    return x + 0.1 * jax.random.normal(key, (8,))


def inputs():
    return np.random.default_rng(94).standard_normal((4, 8)).astype(np.float32), jax.random.key(0)
