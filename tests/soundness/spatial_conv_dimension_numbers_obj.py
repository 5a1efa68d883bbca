"""dimension_numbers bound to a local name from jax.lax.conv_dimension_numbers (NCHW / HWIO / NHWC mixed), as
flax writes it, SAME 5x5 on 2x4 (was refused: not a literal)."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "c", "h", "w"], k: Tensor["kh", "kw", "c", "d"]) -> Tensor["batch", "h", "w", "d"]:
    dn = jax.lax.conv_dimension_numbers(x.shape, k.shape, ("NCHW", "HWIO", "NHWC"))
    return jax.lax.conv_general_dilated(x, k, window_strides=(1, 1), padding="SAME", dimension_numbers=dn)


def inputs():
    rng = np.random.default_rng(33)
    return (rng.standard_normal((2, 3, 16, 32)).astype(np.float32), (rng.standard_normal((5, 5, 3, 4)) / 5).astype(np.float32))
