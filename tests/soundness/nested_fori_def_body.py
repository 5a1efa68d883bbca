"""jax.lax.fori_loop with a nested def body that closes over a split weight: each step's
contraction over the split dim is a partial sum completed inside the body."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"f": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "f"], w2: Tensor["f", "d"]) -> Tensor["batch", "d"]:
    def step(i, h):
        return h + 0.5 * jnp.tanh(h @ w1) @ w2

    return jax.lax.fori_loop(0, 3, step, x)


def inputs():
    rng = np.random.default_rng(1402)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32) * 0.3,
            rng.standard_normal((16, 8)).astype(np.float32) * 0.3)
