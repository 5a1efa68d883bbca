"""A transposed conv written as conv_general_dilated(lhs_dilation=(2, 2)): runs or is refused at its place.

Refused at its place (lhs_dilation=), with a fix: upsample with jnp.repeat, then convolve."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "d"]) -> Tensor["batch", "h2", "w2", "d"]:
    y: Tensor["batch", "h2", "w2", "d"] = jax.lax.conv_general_dilated(
        x, k, (1, 1), [(1, 2), (1, 2)], lhs_dilation=(2, 2), dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return y


def inputs():
    rng = np.random.default_rng(30)
    return (rng.standard_normal((2, 8, 16, 3)).astype(np.float32), rng.standard_normal((3, 3, 3, 4)).astype(np.float32))
