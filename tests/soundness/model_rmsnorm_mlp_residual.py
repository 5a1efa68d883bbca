"""Model: RMS norm (d split) into an MLP with a residual, scalar MSE loss, with gradients."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def rms_norm(x, g):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * g


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], g: Tensor["d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"],
      y: Tensor["batch", "d"]) -> Tensor[()]:
    h = x + jax.nn.relu(rms_norm(x, g) @ w1) @ w2
    return jnp.mean((h - y) ** 2)


def inputs():
    rng = np.random.default_rng(145)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8,)).astype(np.float32),
            rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal((16, 8)).astype(np.float32),
            rng.standard_normal((4, 8)).astype(np.float32))
