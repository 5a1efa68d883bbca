"""A 1x1 conv as an einsum ('bhwc,cd->bhwd') mixed with a 3x3 lax conv, image split 8 ways over height."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(h=8)
def f(x: Tensor["batch", "h", "w", "c"], w: Tensor["c", "d"], k: Tensor["kh", "kw", "d", "d"]) -> Tensor["batch", "h", "w", "d"]:
    y = jax.nn.gelu(jnp.einsum("bhwc,cd->bhwd", x, w))
    return y + jax.lax.conv_general_dilated(y, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def inputs():
    rng = np.random.default_rng(32)
    return (rng.standard_normal((2, 32, 8, 3)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32),
            (rng.standard_normal((3, 3, 4, 4)) / 3).astype(np.float32))
