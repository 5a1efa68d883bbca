"""A Python for loop whose body leaves the carried value a partial sum where it entered whole:
completed at the end of each iteration (entering the loop as a partial sum would sum each
device's whole copy of x on the first iteration: 4x)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"f": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "f"], w2: Tensor["f", "d"]) -> Tensor["batch", "d"]:
    h = x
    for _ in range(3):
        h = jnp.tanh(h @ w1) @ w2
    return h


def inputs():
    rng = np.random.default_rng(1409)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32) * 0.3,
            rng.standard_normal((16, 8)).astype(np.float32) * 0.3)
