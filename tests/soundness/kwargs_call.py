"""Calling a @mesh function with keyword arguments out of order, and a hinted keyword-only parameter."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"], *, b: Tensor["d_ff"]) -> Tensor["batch", "d_ff"]:
    return jax.nn.relu(x @ w + b)


def scenario(mod, pick):
    x, w, b = inputs()
    return pick(mod.f)(w=w, b=b, x=x)


def inputs():
    rng = np.random.default_rng(164)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16,)).astype(np.float32))
