"""jax.lax.conv (NCHW / OIHW by definition) with SAME padding, image split over height and width on 2x2x2."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, h=2, w=2)
def f(x: Tensor["batch", "c", "h", "w"], k: Tensor["o", "c", "kh", "kw"]) -> Tensor["batch", "o", "h", "w"]:
    return jax.nn.relu(jax.lax.conv(x, k, (1, 1), "SAME"))


def inputs():
    rng = np.random.default_rng(2)
    return (rng.standard_normal((4, 3, 16, 16)).astype(np.float32), rng.standard_normal((5, 3, 3, 3)).astype(np.float32))
