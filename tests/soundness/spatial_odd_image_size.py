"""An image of 15 x 15 pixels on a 2x4 mesh over height and width: cannot split, must be a positioned error.

Refused at the call, pointing at the image parameter's hint."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "c"]) -> Tensor["batch", "h", "w", "c"]:
    return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def inputs():
    rng = np.random.default_rng(8)
    return (rng.standard_normal((2, 15, 15, 3)).astype(np.float32), rng.standard_normal((3, 3, 3, 3)).astype(np.float32))
