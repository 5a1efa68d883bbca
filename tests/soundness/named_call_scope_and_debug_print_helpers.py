"""Helpers under jax.named_call (as a decorator, and through functools.partial with name=), a jax.named_scope
block and jax.debug.print of a partial sum inside a @mesh function: the wrappers are transparent to the rewrite."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@functools.partial(jax.named_call, name="mlp")
def mlp(x, w1, w2):
    return jax.nn.relu(x @ w1) @ w2


@jax.named_call
def norm(x):
    return x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    with jax.named_scope("block"):
        h = norm(x)
        y = mlp(h, w1, w2)
    jax.debug.print("y {}", y.sum())
    return x + y


def inputs():
    rng = np.random.default_rng(31)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 8)).astype(np.float32))
