"""A Python value after one branch of an if on a flag known only when traced (``t = 3.0``) and a tuple of arrays after
the other (``t = (h, x)``), then ``jnp.sum(t[0])``: refused, naming both. Before: the first branch's Python value
was kept, so the tuple's split item was summed as a number (a raw JAX error: out_specs that need replication)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    h = jnp.tanh(x @ w)
    if flag:
        t = 3.0
    else:
        t = (h, x)
    return jnp.sum(t[0]) * 2.0


def inputs():
    rng = np.random.default_rng(3509)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    w = rng.standard_normal((5, 16)).astype(np.float32)
    return (x, w, False)
