"""Bilinear upsampling x2 with jax.image.resize (sizes from x.shape), then a 1x1 conv, 2x4 mesh."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "d"]) -> Tensor["batch", "h2", "w2", "d"]:
    n, h, w, c = x.shape
    up: Tensor["batch", "h2", "w2", "c"] = jax.image.resize(x, (n, h * 2, w * 2, c), method="bilinear")
    return jax.lax.conv_general_dilated(up, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def inputs():
    rng = np.random.default_rng(9)
    return (rng.standard_normal((2, 8, 16, 3)).astype(np.float32), rng.standard_normal((1, 1, 3, 4)).astype(np.float32))
