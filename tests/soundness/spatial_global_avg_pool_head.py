"""Conv, global average pooling jnp.mean(axis=(1, 2)), a dense head and a softmax cross-entropy loss, 2x4."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "d"], w: Tensor["d", "classes"],
      labels: Tensor["batch", "classes"]) -> Tensor[()]:
    y = jax.nn.relu(jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")))
    logits = jnp.mean(y, axis=(1, 2)) @ w
    return -jnp.mean(jnp.sum(labels * jax.nn.log_softmax(logits), axis=-1))


def inputs():
    rng = np.random.default_rng(24)
    return (rng.standard_normal((2, 16, 16, 3)).astype(np.float32), (rng.standard_normal((3, 3, 3, 8)) / 3).astype(np.float32),
            rng.standard_normal((8, 5)).astype(np.float32), np.eye(5, dtype=np.float32)[[1, 3]])
