"""A Python number a loop changes (``n = n + 1`` three times) and an ``if n == 1:`` after it, whose branches
leave ``out`` with other dims: meshify knew ``n`` only as its first iteration left it (1), so the comparison
(known since session 19) picked the branch Python does not take, and the other ran unrewritten (a [8] result for
the reference's [16]).  A value a loop changes is unknown after it: both branches are rewritten, and refused
since they leave other dims."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_ff"]):
    n = 0
    for _ in range(3):
        n = n + 1
    if n == 1:
        out = x.sum(-1)
    else:
        out = jnp.tanh(x).mean(0)
    return out


def inputs():
    return (np.random.default_rng(447).standard_normal((4, 16)).astype(np.float32),)
