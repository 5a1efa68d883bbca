"""MobileNet block: depthwise 3x3 (feature_group_count=c) then pointwise 1x1 conv, stride 2 depthwise, 2x4."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
DN = ("NHWC", "HWIO", "NHWC")


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"], dw: Tensor["kh", "kw", "one", "c"],
      pw: Tensor["kh1", "kw1", "c", "d"]) -> Tensor["batch", "h2", "w2", "d"]:
    y = jax.nn.relu6(jax.lax.conv_general_dilated(x, dw, (2, 2), "SAME", dimension_numbers=DN,
                                                  feature_group_count=x.shape[-1]))
    out: Tensor["batch", "h2", "w2", "d"] = jax.lax.conv_general_dilated(y, pw, (1, 1), "VALID", dimension_numbers=DN)
    return out


def inputs():
    rng = np.random.default_rng(22)
    return (rng.standard_normal((2, 16, 32, 4)).astype(np.float32), rng.standard_normal((3, 3, 1, 4)).astype(np.float32),
            rng.standard_normal((1, 1, 4, 6)).astype(np.float32))
