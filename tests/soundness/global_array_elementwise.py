"""x * B with B a module-level vector, x batch-split (B's dim unsplit): B's dims are unnamed."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"

B = jnp.arange(4.0)


@mesh(batch=8)
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x * B


def inputs():
    return (np.random.default_rng(113).standard_normal((8, 4)).astype(np.float32),)
