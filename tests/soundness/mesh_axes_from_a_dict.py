"""``@mesh(**TP, rules=RULES)``: the mesh's axes kept in a module constant's dict, as configs of several runs are.
The decorator and ``meshify convert`` read it alike.  Before, convert refused what the decorator ran ("@mesh takes
keyword arguments only, got 'TP'", the PPO attack)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

TP = {"batch": 2, "model": 4}
RULES = {"d_ff": "model"}


@mesh(**TP, rules=RULES)
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]):
    return x + jax.nn.gelu(x @ w1) @ w2


def inputs():
    rng = np.random.default_rng(71)
    return (rng.standard_normal((4, 4)).astype(np.float32), rng.standard_normal((4, 8)).astype(np.float32) / 2,
            rng.standard_normal((8, 4)).astype(np.float32) / 3)
