"""A depthwise 5x5 conv (feature_group_count = channels) on images split over height, as MobileNet blocks write it."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, h=4)
def f(x: Tensor["batch", "h", "w", "c"], dw: Tensor["kh", "kw", "one", "c"],
      pw: Tensor["one", "one", "c", "d"]) -> Tensor["batch", "h", "w", "d"]:
    channels = x.shape[-1]
    y = jax.lax.conv_general_dilated(x, dw, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                     feature_group_count=channels)
    return jax.lax.conv_general_dilated(jax.nn.relu6(y), pw, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def inputs():
    rng = np.random.default_rng(1306)
    return (rng.standard_normal((2, 16, 8, 6)).astype(np.float32), rng.standard_normal((5, 5, 1, 6)).astype(np.float32),
            rng.standard_normal((1, 1, 6, 4)).astype(np.float32))
