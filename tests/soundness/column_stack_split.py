"""jnp.column_stack of two batch-split vectors, then a matmul."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def f(a: Tensor["batch"], b: Tensor["batch"], w: Tensor["two", "d"]) -> Tensor["batch", "d"]:
    ab: Tensor["batch", "two"] = jnp.column_stack([a, b])
    return ab @ w


def inputs():
    rng = np.random.default_rng(49)
    return (rng.standard_normal((16,)).astype(np.float32), rng.standard_normal((16,)).astype(np.float32),
            rng.standard_normal((2, 4)).astype(np.float32))
