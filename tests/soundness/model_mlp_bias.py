"""Model: a 2-layer MLP with biases on a 2x4 mesh (Megatron d_ff split), with gradients."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], b1: Tensor["d_ff"], w2: Tensor["d_ff", "d"],
      b2: Tensor["d"]) -> Tensor["batch", "d"]:
    h = jax.nn.gelu(x @ w1 + b1)
    return h @ w2 + b2


def inputs():
    rng = np.random.default_rng(140)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16,)).astype(np.float32), rng.standard_normal((16, 8)).astype(np.float32),
            rng.standard_normal((8,)).astype(np.float32))
