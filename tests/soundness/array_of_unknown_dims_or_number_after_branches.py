"""The other order of ``number_or_array_after_branches``: an array meshify cannot name the dims of after the first
branch, a Python number after the second, the flag off: refused. Before: the generated code sliced the number as
the array it kept (``mr.local_block(s, ...)`` of a float: a raw AttributeError)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    if flag:
        s = jnp.linspace(0.0, 1.0, 16)
    else:
        s = 2.0
    return jnp.tanh(x @ w) * s


def inputs():
    rng = np.random.default_rng(3503)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    w = rng.standard_normal((5, 16)).astype(np.float32)
    return (x, w, False)
