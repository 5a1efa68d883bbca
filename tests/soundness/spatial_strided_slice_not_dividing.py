"""x[:, :, ::3] of 16 columns split over 4 takes 6 columns, which do not split into 4 blocks: refused at the call."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w"]) -> Tensor["batch", "h", "w3"]:
    y: Tensor["batch", "h", "w3"] = x[:, :, ::3]
    return y * 2.0


def inputs():
    rng = np.random.default_rng(40)
    return (rng.standard_normal((2, 16, 16)).astype(np.float32),)
