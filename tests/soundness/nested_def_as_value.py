"""A nested def closing over a split weight, passed to jax.vmap as a value: meshify cannot see
where it runs, so it is refused even though x, the array passed, is whole (never passed through with a local block of the weight)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"f": "model"})
def f(x: Tensor["n", "d"], w1: Tensor["d", "f"], w2: Tensor["f", "d"]) -> Tensor["n", "d"]:
    def row(r):
        return jnp.tanh(r @ w1) @ w2

    return jax.vmap(row)(x)


def inputs():
    rng = np.random.default_rng(1408)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 8)).astype(np.float32))
