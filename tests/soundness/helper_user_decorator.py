"""A helper wrapped by a user-written decorator (a residual wrapper) called on split operands."""
import functools

import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def residual(fn):
    @functools.wraps(fn)
    def wrapped(x, *args):
        return x + fn(x, *args)

    return wrapped


@residual
def mlp(x, w1, w2):
    return jax.nn.relu(x @ w1) @ w2


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    return mlp(x, w1, w2)


def inputs():
    rng = np.random.default_rng(170)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 8)).astype(np.float32))
