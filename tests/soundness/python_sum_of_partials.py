"""Python's builtin sum([a, b]) of two partial sums (row sums over a split dim)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], y: Tensor["batch", "d"]) -> Tensor["batch"]:
    a = jnp.sum(x, axis=1)
    b = jnp.sum(y * y, axis=1)
    return sum([a, b])


def inputs():
    rng = np.random.default_rng(44)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((4, 8)).astype(np.float32)
