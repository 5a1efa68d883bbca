"""Downsampling by a strided slice x[:, ::2, ::2], then a 3x3 conv, 2x4 mesh."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "c"]) -> Tensor["batch", "h2", "w2", "c"]:
    y: Tensor["batch", "h2", "w2", "c"] = x[:, ::2, ::2]
    return jax.lax.conv_general_dilated(y, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def inputs():
    rng = np.random.default_rng(7)
    return (rng.standard_normal((2, 16, 32, 3)).astype(np.float32), rng.standard_normal((3, 3, 3, 3)).astype(np.float32))
