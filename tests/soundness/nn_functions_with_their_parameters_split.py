"""jax.nn functions with their parameters on a split dim: softmax over a tuple of axes, gelu(approximate=False), standardize(epsilon=), one_hot(dtype=) of ids out of range, celu, leaky_relu, glu."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "seq", "d"], ids: Tensor["batch", "seq"]) -> Tensor["batch", "seq", "d"]:
    a = jax.nn.softmax(x, axis=(1, 2))
    b = jax.nn.gelu(x, approximate=False)
    c = jax.nn.standardize(x, axis=-1, epsilon=1e-3)
    d = jax.nn.one_hot(ids, x.shape[-1], dtype=x.dtype)
    e = jax.nn.log_softmax(x, axis=-1)
    g = (
        jax.nn.celu(x, alpha=0.5)
        + jax.nn.leaky_relu(x, negative_slope=0.2)
        + jax.nn.glu(jnp.concatenate([x, x], -1), axis=-1)
    )
    return a + b + c + d + e + g


def inputs():
    rng = np.random.default_rng(21)
    return rng.standard_normal((4, 3, 8)).astype(np.float32), rng.integers(-2, 10, (4, 3)).astype(np.int32)
