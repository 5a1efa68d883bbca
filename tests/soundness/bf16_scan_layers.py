"""bfloat16 layers under jax.lax.scan: each layer's down projection over split f is a partial sum
formed inside the scan body (a lambda) and completed there."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=4, rules={"f": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["layer", "d", "f"], w2: Tensor["layer", "f", "d"]) -> Tensor["batch", "d"]:
    out, _ = jax.lax.scan(lambda h, ws: (h + jax.nn.relu(h @ ws[0]) @ ws[1], None), x, (w1, w2))
    return out


def inputs():
    x = np.full((2, 4), 1.0)
    w1 = np.stack([np.eye(4, 8) + np.eye(4, 8, 4)] * 2) / 4.0   # relu(h @ a) >= 0
    w2 = np.zeros((2, 8, 4))
    w2[:, 0] = 256.0
    w2[:, 1] = 1.0
    w2[:, 2:4] = -128.0
    return (x.astype(jnp.bfloat16), w1.astype(jnp.bfloat16), w2.astype(jnp.bfloat16))
