"""A float16 image and kernel: a 3x3 SAME conv on a 2x4 mesh."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "d"]) -> Tensor["batch", "h", "w", "d"]:
    return jnp.tanh(jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")))


def inputs():
    rng = np.random.default_rng(14)
    return (rng.standard_normal((2, 16, 16, 3)).astype(np.float16), (rng.standard_normal((3, 3, 3, 4)) / 3).astype(np.float16))
