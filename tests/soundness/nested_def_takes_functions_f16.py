"""nested_def_takes_functions with float16 inputs: each partial sum accumulated in float32 comes back float16."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


def swish(x):
    return x * jax.nn.sigmoid(x)


def scaled(s, x):
    return s * jnp.tanh(x)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"], g: Tensor["d_ff"]):
    def block(h, act, times=1):
        for _ in range(times):
            h = h + act(h @ w1) @ w2 * 0.5
        return h

    def gated(y):
        return jax.nn.gelu(y) * g

    h = block(x, jax.nn.gelu)
    h = block(h, swish, 2)
    h = block(h, lambda y: jnp.tanh(y) * g)
    h = block(h, functools.partial(scaled, 0.5))
    h = block(h, gated)
    return jnp.mean(h ** 2)


def inputs():
    rng = np.random.default_rng(19)
    return (rng.standard_normal((4, 8)).astype(np.float16), 0.3 * rng.standard_normal((8, 16)).astype(np.float16),
            0.3 * rng.standard_normal((16, 8)).astype(np.float16), 1.0 + 0.1 * rng.standard_normal(16).astype(np.float16))
