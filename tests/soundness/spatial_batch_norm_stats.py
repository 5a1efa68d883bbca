"""Batch norm training statistics: jnp.mean(x, axis=(0, 1, 2)) and the biased variance, scale and shift, 2x2x2."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, h=2, w=2)
def f(x: Tensor["batch", "h", "w", "c"], gamma: Tensor["c"], beta: Tensor["c"],
      k: Tensor["kh", "kw", "c", "c"]) -> Tensor["batch", "h", "w", "c"]:
    y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    mean = jnp.mean(y, axis=(0, 1, 2))
    var = jnp.var(y, axis=(0, 1, 2))
    return jax.nn.relu(gamma * (y - mean) / jnp.sqrt(var + 1e-5) + beta)


def inputs():
    rng = np.random.default_rng(19)
    return (rng.standard_normal((4, 16, 16, 3)).astype(np.float32), rng.standard_normal((3,)).astype(np.float32),
            rng.standard_normal((3,)).astype(np.float32), (rng.standard_normal((3, 3, 3, 3)) / 3).astype(np.float32))
