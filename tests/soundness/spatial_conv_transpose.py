"""U-Net upsampling with jax.lax.conv_transpose (stride 2): runs or is refused with a positioned error.

Refused at its place: jax.lax.conv_transpose has no rule (a transposed convolution over a split dim)."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "d"]) -> Tensor["batch", "h2", "w2", "d"]:
    y: Tensor["batch", "h2", "w2", "d"] = jax.lax.conv_transpose(x, k, (2, 2), "SAME",
                                                                  dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return y


def inputs():
    rng = np.random.default_rng(29)
    return (rng.standard_normal((2, 8, 16, 3)).astype(np.float32), rng.standard_normal((2, 2, 3, 4)).astype(np.float32))
