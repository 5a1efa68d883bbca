"""A small data-parallel CNN (two 3x3 convs, relu, global average pool, a dense head), batch split 8 ways."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
DN = ("NHWC", "HWIO", "NHWC")


@mesh(batch=8)
def f(x: Tensor["batch", "h", "w", "c"], k1: Tensor["kh", "kw", "c", "hidden"], b1: Tensor["hidden"],
      k2: Tensor["kh", "kw", "hidden", "hidden2"], head: Tensor["hidden2", "classes"]) -> Tensor["batch", "classes"]:
    y = jax.nn.relu(jax.lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=DN) + b1)
    y = jax.nn.relu(jax.lax.conv_general_dilated(y, k2, (2, 2), "SAME", dimension_numbers=DN))
    return jnp.mean(y, axis=(1, 2)) @ head


def inputs():
    rng = np.random.default_rng(1301)
    return (rng.standard_normal((8, 8, 8, 3)).astype(np.float32), rng.standard_normal((3, 3, 3, 4)).astype(np.float32),
            rng.standard_normal((4,)).astype(np.float32), rng.standard_normal((3, 3, 4, 4)).astype(np.float32),
            rng.standard_normal((4, 5)).astype(np.float32))
