"""Layer norm with jnp.var(..., keepdims=True) over a split d_model, negative axis, with gradients."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_model": "model"})
def f(x: Tensor["batch", "length", "d_model"], g: Tensor["d_model"]) -> Tensor["batch", "length", "d_model"]:
    mu = x.mean(axis=-1, keepdims=True)
    return (x - mu) / jnp.sqrt(jnp.var(x, axis=-1, keepdims=True) + 1e-5) * g


def inputs():
    rng = np.random.default_rng(7001)
    return (rng.standard_normal((2, 3, 8)).astype(np.float32) * 3 + 1, rng.standard_normal((8,)).astype(np.float32))
