"""Group norm on NCHW through reshape into (groups, channels per group), 2x4 over height and width."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "c", "h", "w"], scale: Tensor["c"]) -> Tensor["batch", "c", "h", "w"]:
    n, c, h, w = x.shape
    g: Tensor["batch", "groups", "cg", "h", "w"] = x.reshape(n, 2, c // 2, h, w)
    mean = g.mean(axis=(2, 3, 4), keepdims=True)
    var = g.var(axis=(2, 3, 4), keepdims=True)
    y: Tensor["batch", "c", "h", "w"] = ((g - mean) / jnp.sqrt(var + 1e-6)).reshape(n, c, h, w)
    return y * scale[:, None, None]


def inputs():
    rng = np.random.default_rng(21)
    return (rng.standard_normal((2, 4, 16, 16)).astype(np.float32), rng.standard_normal((4,)).astype(np.float32))
