"""jax.lax.conv with an explicit padding list [(2, 2), (2, 2)] and a 5x5 kernel, NCHW, 2x4 mesh."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "c", "h", "w"], k: Tensor["o", "c", "kh", "kw"]) -> Tensor["batch", "o", "h", "w"]:
    return jax.lax.conv(x, k, (1, 1), [(2, 2), (2, 2)])


def inputs():
    rng = np.random.default_rng(3)
    return (rng.standard_normal((2, 3, 16, 16)).astype(np.float32), rng.standard_normal((4, 3, 5, 5)).astype(np.float32))
