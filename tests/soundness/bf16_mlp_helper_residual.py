"""A bfloat16 MLP block in a helper: the down projection over split d_ff is a partial sum the
helper returns; the caller adds the residual. Each device's partial products need more bits
than bfloat16 has (the psum must add them in float32 and round once, as one device does)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def mlp(x: Tensor["batch", "d"], w1: Tensor["d", "f"], w2: Tensor["f", "d"]):
    return jax.nn.relu(x @ w1) @ w2


@mesh(model=4, rules={"f": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "f"], w2: Tensor["f", "d"]) -> Tensor["batch", "d"]:
    x = x + mlp(x, w1, w2)
    return x


def inputs():
    x = np.ones((2, 4))
    w1 = np.eye(4, 8) * 1.0 + np.eye(4, 8, 4)        # relu(x @ w1) = ones [2, 8]
    w2 = np.zeros((8, 4))
    w2[0::2] = 256.0                                  # device 0: rows 0, 1 -> 256 + 1 = 257
    w2[1::2] = 1.0
    w2[2:4] = -128.0                                  # device 1: -256
    w2[4:6] = [[256.0], [1.0]] * np.ones((2, 4))
    w2[6:8] = -128.0
    return (x.astype(jnp.bfloat16), w1.astype(jnp.bfloat16), w2.astype(jnp.bfloat16))
