"""``n = 1`` in one branch and ``n = 3`` in the other of an if on a value meshify does not know (a dim's size),
then ``if n == 1:`` whose branches leave ``out`` with other dims: after the first if, ``n`` was the first branch's
value (1), so the second if took the branch Python does not take (a [8] result for the reference's [16]).  Either branch's value: unknown, both branches rewritten and
refused (they leave other dims)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_ff"]):
    if x.shape[0] > 100:
        n = 1
    else:
        n = 3
    if n == 1:
        out = x.sum(-1)
    else:
        out = jnp.tanh(x).mean(0)
    return out


def inputs():
    return (np.random.default_rng(448).standard_normal((4, 16)).astype(np.float32),)
