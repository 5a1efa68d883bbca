"""Average pooling 3x3 stride 1 SAME, dividing by the count of real pixels (a reduce_window of ones)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"]) -> Tensor["batch", "h", "w", "c"]:
    s = jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
    n = jax.lax.reduce_window(jnp.ones_like(x), 0.0, jax.lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
    return s / n


def inputs():
    rng = np.random.default_rng(11)
    return (rng.standard_normal((2, 16, 16, 3)).astype(np.float32),)
