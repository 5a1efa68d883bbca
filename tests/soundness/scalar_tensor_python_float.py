"""A Tensor[()] parameter (a temperature) given a Python float."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], t: Tensor[()]) -> Tensor["batch", "d"]:
    return jax.nn.softmax(x / t, axis=-1)


def inputs():
    return np.random.default_rng(171).standard_normal((4, 8)).astype(np.float32), 0.5
