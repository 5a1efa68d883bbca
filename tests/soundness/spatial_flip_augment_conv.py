"""Test-time augmentation: average a conv of x and of the horizontally flipped x flipped back, NHWC, 2x4."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def conv(x, k):
    return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "d"]) -> Tensor["batch", "h", "w", "d"]:
    return 0.5 * (conv(x, k) + jnp.flip(conv(jnp.flip(x, axis=2), k), axis=2))


def inputs():
    rng = np.random.default_rng(28)
    return (rng.standard_normal((2, 16, 16, 3)).astype(np.float32), rng.standard_normal((3, 3, 3, 4)).astype(np.float32))
