"""jnp.mean over a split dim of float16 values whose per-device sums overflow float16."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=8, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.mean(x, axis=-1)


def inputs():
    signs = np.where(np.arange(16) // 2 % 2 == 0, 1.0, -1.0)
    x = np.tile(40000.0 * signs, (4, 1)) + np.arange(4)[:, None]
    return (x.astype(np.float16),)
