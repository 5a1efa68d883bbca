"""float16 row sums over a split dim: each device's partial sum overflows fp16, the whole sum does not."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=8, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.sum(x, axis=1)


def inputs():
    # Each device holds 2 columns of +-40000: local sums of +-80000 overflow fp16 (max 65504);
    # jnp.sum accumulates in float32, so the whole row sums to 0 (+ a small offset) exactly.
    signs = np.where(np.arange(16) // 2 % 2 == 0, 1.0, -1.0)
    x = np.tile(40000.0 * signs, (4, 1)) + np.arange(4)[:, None]
    return (x.astype(np.float16),)
