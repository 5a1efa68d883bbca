"""A nested def applying the function passed to it, in float16: its partial sums accumulated in float32 come
back float16 whichever function it applies (a jax function, a lambda over a split gain, another nested def)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"], g: Tensor["d_ff"]):
    def residual(h, fn):
        return h + fn(h @ w1) @ w2 * 0.5

    def silu_gain(y):
        return jax.nn.silu(y) * g

    h = residual(residual(x, jnp.tanh), lambda y: jax.nn.relu(y) * g)
    return residual(h, silu_gain)


def inputs():
    rng = np.random.default_rng(23)
    return (rng.standard_normal((4, 8)).astype(np.float16), (0.3 * rng.standard_normal((8, 16))).astype(np.float16),
            (0.3 * rng.standard_normal((16, 8))).astype(np.float16),
            (1.0 + 0.1 * rng.standard_normal(16)).astype(np.float16))
