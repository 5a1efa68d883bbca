"""Mixed precision as users write it: float32 master weights cast to bfloat16 for the matmul,
the loss summed in float32. The contraction over split d is a partial sum of bfloat16 products."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor[()]:
    h = x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)
    return jnp.mean(jnp.square(h.astype(jnp.float32)))


def inputs():
    block = np.array([256.0, 1.0, -128.0, -128.0])
    x = np.tile(block, (4, 2))                        # [4, 8]: per-device partial sums 257, -256
    w = np.ones((8, 3), np.float32)
    return (x.astype(np.float32), w)
