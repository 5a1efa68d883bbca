"""A U-Net level: conv, 2x2 max pool, conv, nearest upsampling (jnp.repeat), skip concat along channels, conv."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
DN = ("NHWC", "HWIO", "NHWC")


def conv(x, k):
    return jax.nn.relu(jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=DN))


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"], k1: Tensor["kh", "kw", "c", "c"], k2: Tensor["kh", "kw", "c", "c"],
      k3: Tensor["kh", "kw", "c2", "c"]) -> Tensor["batch", "h", "w", "c"]:
    skip = conv(x, k1)
    down: Tensor["batch", "hh", "ww", "c"] = jax.lax.reduce_window(skip, -jnp.inf, jax.lax.max, (1, 2, 2, 1),
                                                                     (1, 2, 2, 1), "VALID")
    mid = conv(down, k2)
    up: Tensor["batch", "h", "w", "c"] = jnp.repeat(jnp.repeat(mid, 2, axis=1), 2, axis=2)
    cat: Tensor["batch", "h", "w", "c2"] = jnp.concatenate([up, skip], axis=-1)
    return conv(cat, k3)


def inputs():
    rng = np.random.default_rng(17)
    k = lambda i: (rng.standard_normal((3, 3, i, 4)) / 3).astype(np.float32)
    return (rng.standard_normal((2, 16, 32, 4)).astype(np.float32), k(4), k(4), k(8))
