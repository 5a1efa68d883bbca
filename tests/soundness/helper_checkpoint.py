"""A @jax.checkpoint helper (rematerialised block) on split operands."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@jax.checkpoint
def block(x, w1, w2):
    return x + jax.nn.gelu(x @ w1) @ w2


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    return block(block(x, w1, w2), w1, w2)


def inputs():
    rng = np.random.default_rng(134)
    return (rng.standard_normal((4, 8)).astype(np.float32), 0.3 * rng.standard_normal((8, 16)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8)).astype(np.float32))
