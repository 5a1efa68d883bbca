"""One helper called from two @mesh functions on the same mesh with different layout rules."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def ffn(x, w1, w2):
    h = jax.nn.relu(x @ w1)
    return h @ w2


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def megatron(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    return ffn(x, w1, w2)


@mesh(batch=2, model=4, rules={"d": "model"})
def by_d(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    return ffn(x, w1, w2)


def inputs():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w1 = rng.standard_normal((8, 16)).astype(np.float32)
    w2 = rng.standard_normal((16, 8)).astype(np.float32)
    return {"megatron": (x, w1, w2), "by_d": (x, w1, w2)}
