"""float16 x @ w contracting a split dim: per-device partial products overflow fp16, the whole dot does not."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False  # the gradient of this dot overflows in the reference too


@mesh(model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["batch", "e"]:
    return x @ w


def inputs():
    signs = np.where(np.arange(8) // 2 % 2 == 0, 1.0, -1.0)
    x = np.tile(200.0 * signs, (2, 1)).astype(np.float16)   # [2, 8]
    w = np.full((8, 3), 200.0).astype(np.float16)            # each device's 2 products: +-80000
    return x, w
