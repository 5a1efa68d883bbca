"""ResNet downsampling block: 3x3 stride-2 conv, 3x3 conv, 1x1 stride-2 projection shortcut, 2x2x2."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def conv(x, k, stride=1):
    return jax.lax.conv_general_dilated(x, k, (stride, stride), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


@mesh(batch=2, h=2, w=2)
def f(x: Tensor["batch", "h", "w", "c"], k1: Tensor["kh", "kw", "c", "d"], k2: Tensor["kh", "kw", "d", "d"],
      proj: Tensor["one", "one", "c", "d"]) -> Tensor["batch", "h2", "w2", "d"]:
    y = jax.nn.relu(conv(x, k1, 2))
    y = conv(y, k2)
    out: Tensor["batch", "h2", "w2", "d"] = jax.nn.relu(y + conv(x, proj, 2))
    return out


def inputs():
    rng = np.random.default_rng(23)
    return (rng.standard_normal((4, 16, 16, 3)).astype(np.float32), (rng.standard_normal((3, 3, 3, 4)) / 3).astype(np.float32),
            (rng.standard_normal((3, 3, 4, 4)) / 3).astype(np.float32), rng.standard_normal((1, 1, 3, 4)).astype(np.float32))
