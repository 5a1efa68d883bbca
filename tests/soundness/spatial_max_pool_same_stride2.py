"""ResNet stem: 7x7 stride-2 conv, then 3x3 max pool stride 2 padding SAME, 2x2x2 mesh."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, h=2, w=2)
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "d"]) -> Tensor["batch", "h4", "w4", "d"]:
    y = jax.nn.relu(jax.lax.conv_general_dilated(x, k, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")))
    p: Tensor["batch", "h4", "w4", "d"] = jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 3, 3, 1), (1, 2, 2, 1),
                                                                  "SAME")
    return p


def inputs():
    rng = np.random.default_rng(10)
    return (rng.standard_normal((2, 32, 32, 3)).astype(np.float32), rng.standard_normal((7, 7, 3, 4)).astype(np.float32) / 7)
