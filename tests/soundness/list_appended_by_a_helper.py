"""A helper appending to the list its caller made (``collect(hs, x)``): the caller's list changes where
meshify does not follow it, so the append is refused (the caller would read the list as it was)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


def collect(acc, v):
    acc.append(v * 2)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_model"], w1: Tensor["layers", "d_model", "d_ff"]):
    hs = [x @ w1[0]]
    for i in range(1, w1.shape[0]):
        collect(hs, x @ w1[i])
    return jnp.stack(hs).sum(0)


def inputs():
    rng = np.random.default_rng(443)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((3, 8, 16)).astype(np.float32)
