"""jax.lax.conv_with_general_padding with rhs dilation 2 (padding 2 keeps the size), NCHW, 2x2x2."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, h=2, w=2)
def f(x: Tensor["batch", "c", "h", "w"], k: Tensor["o", "c", "kh", "kw"]) -> Tensor["batch", "o", "h", "w"]:
    return jax.lax.conv_with_general_padding(x, k, (1, 1), [(2, 2), (2, 2)], (1, 1), (2, 2))


def inputs():
    rng = np.random.default_rng(4)
    return (rng.standard_normal((2, 3, 16, 16)).astype(np.float32), rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
