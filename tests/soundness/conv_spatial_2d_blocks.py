"""Two SAME 3x3 conv layers with biases on images split over height and width (2x4 mesh), then a pooled loss."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def conv(x, k):
    return jax.lax.conv_general_dilated(x, k, window_strides=(1, 1), padding="SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))


@mesh(rows=2, cols=4, rules={"h": "rows", "w": "cols"})
def f(x: Tensor["batch", "h", "w", "c"], k1: Tensor["kh", "kw", "c", "c"], b1: Tensor["c"],
      k2: Tensor["kh", "kw", "c", "c"]) -> Tensor["batch", "c"]:
    y = jax.nn.gelu(conv(x, k1) + b1)
    y = x + conv(y, k2)
    return jnp.sum(y * y, axis=(1, 2))


def inputs():
    rng = np.random.default_rng(1302)
    return (rng.standard_normal((2, 8, 16, 4)).astype(np.float32),
            rng.standard_normal((3, 3, 4, 4)).astype(np.float32) / 3, rng.standard_normal((4,)).astype(np.float32),
            rng.standard_normal((3, 3, 4, 4)).astype(np.float32) / 3)
