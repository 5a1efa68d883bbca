"""Downsampling with jax.image.resize 'nearest' to half size after a stride-1 conv, 2x2x2."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, h=2, w=2)
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "c"]) -> Tensor["batch", "h2", "w2", "c"]:
    y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    n, h, w, c = y.shape
    d: Tensor["batch", "h2", "w2", "c"] = jax.image.resize(y, (n, h // 2, w // 2, c), "nearest")
    return d


def inputs():
    rng = np.random.default_rng(36)
    return (rng.standard_normal((2, 16, 16, 3)).astype(np.float32), rng.standard_normal((3, 3, 3, 3)).astype(np.float32))
