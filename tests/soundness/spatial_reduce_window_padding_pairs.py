"""Max pool through reduce_window with explicit padding pairs ((0, 0), (1, 1), (1, 1), (0, 0)), stride 2, 2x4."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"]) -> Tensor["batch", "h2", "w2", "c"]:
    p: Tensor["batch", "h2", "w2", "c"] = jax.lax.reduce_window(
        x, -jnp.inf, jax.lax.max, window_dimensions=(1, 3, 3, 1), window_strides=(1, 2, 2, 1),
        padding=((0, 0), (1, 1), (1, 1), (0, 0)))
    return p


def inputs():
    rng = np.random.default_rng(34)
    return (rng.standard_normal((2, 16, 32, 3)).astype(np.float32),)
