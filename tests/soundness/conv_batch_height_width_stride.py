"""A downsampling block on a 2x2x2 mesh (batch x height x width): a stride-2 conv, then a dilated 3x3 conv."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
DN = ("NHWC", "HWIO", "NHWC")


@mesh(batch=2, h=2, w=2)
def f(x: Tensor["batch", "h", "w", "c"], down: Tensor["kh", "kw", "c", "d"],
      k: Tensor["kh", "kw", "d", "d"]) -> Tensor["batch", "h", "w", "d"]:
    y = jax.nn.relu(jax.lax.conv_general_dilated(x, down, (2, 2), "SAME", dimension_numbers=DN))
    return jax.lax.conv_general_dilated(y, k, (1, 1), "SAME", rhs_dilation=(2, 2), dimension_numbers=DN)


def inputs():
    rng = np.random.default_rng(1304)
    return (rng.standard_normal((4, 16, 16, 3)).astype(np.float32), rng.standard_normal((3, 3, 3, 4)).astype(np.float32),
            rng.standard_normal((3, 3, 4, 4)).astype(np.float32))
