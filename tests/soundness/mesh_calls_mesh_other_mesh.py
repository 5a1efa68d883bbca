"""A @mesh function calling a @mesh function declared on another mesh (sizes and rules differ)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=8, rules={"d": "model"})
def row_mean(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.mean(x, axis=1)


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    m = row_mean(x)
    return x - m[:, None]


def inputs():
    x = np.random.default_rng(11).standard_normal((4, 16)).astype(np.float32)
    return {"f": (x,), "row_mean": (x,)}
