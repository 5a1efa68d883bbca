"""Stride-2 SAME conv where each block holds an odd number of rows (12 columns over 4: blocks of 3, 6 outputs), 2x4.

Refused at the call, pointing at the conv: 6 output columns do not split into 4 blocks."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "c"]) -> Tensor["batch", "h2", "w2", "c"]:
    y: Tensor["batch", "h2", "w2", "c"] = jax.lax.conv_general_dilated(x, k, (2, 2), "SAME",
                                                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return y


def inputs():
    rng = np.random.default_rng(37)
    return (rng.standard_normal((2, 16, 12, 3)).astype(np.float32), rng.standard_normal((3, 3, 3, 3)).astype(np.float32))
