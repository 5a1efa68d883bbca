"""A static flag picks the compute dtype: the partial sum's dtype differs by branch."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=8, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], low: bool = True) -> Tensor["batch", "e"]:
    if low:
        h = x.astype(jnp.bfloat16)
    else:
        h = x
    return h @ w.astype(h.dtype)


def inputs():
    block = np.array([256.0, 1.0, -128.0, -128.0])
    x = np.tile(block, (2, 4)).astype(np.float32)     # [2, 16]
    w = np.ones((16, 3), np.float32)
    return (x, w)
