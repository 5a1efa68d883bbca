"""A @mesh function without a return hint returning a helper's tuple as it is (``return stats(x @ w1)``):
each item leaves in its own layout.  (An item that is a pending partial sum is refused with a fix: unpack
the tuple and return its items, which are then completed.)"""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def stats(h):
    return jnp.tanh(h), jax.nn.relu(h) * 2.0


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"]):
    return stats(x @ w1)


def inputs():
    rng = np.random.default_rng(25)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32))
