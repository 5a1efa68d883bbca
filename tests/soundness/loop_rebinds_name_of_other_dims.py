"""Two Python loops that each start ``h`` afresh, over values of different dims (T5's encoder, then
decoder): ``h`` is not carried from one loop into the other."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "src", "d"], y: Tensor["batch", "tgt", "d"], w: Tensor["d", "d_ff"],
      v: Tensor["d_ff", "d"]) -> Tensor["batch", "tgt", "d"]:
    for _ in range(2):
        h = jnp.tanh(x @ w)
        x = x + h @ v
    for _ in range(2):
        h = jnp.tanh(y @ w)
        y = y + h @ v + jnp.mean(x)
    return y


def inputs():
    rng = np.random.default_rng(275)
    shapes = [(4, 3, 8), (4, 5, 8), (8, 16), (16, 8)]
    return tuple((rng.standard_normal(s) * 0.3).astype(np.float32) for s in shapes)
