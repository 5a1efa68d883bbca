"""A row norm kept as a size-1 dim (keepdims) over a split d of a 3-d value, used to normalise."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "length", "d"]) -> Tensor["batch", "length", "d"]:
    return x / (jnp.linalg.norm(x, ord=2, axis=-1, keepdims=True) + 1e-6)


def inputs():
    rng = np.random.default_rng(7010)
    return (rng.standard_normal((2, 3, 8)).astype(np.float32),)
