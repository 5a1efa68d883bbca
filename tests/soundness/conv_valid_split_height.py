"""VALID padding over a split height: the output has rows - 2 rows, which cannot split at the shard boundaries."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(h=8)
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "d"]) -> Tensor["batch", "h", "w", "d"]:
    return jax.lax.conv_general_dilated(x, k, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def inputs():
    rng = np.random.default_rng(1305)
    return rng.standard_normal((2, 16, 8, 3)).astype(np.float32), rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
