"""jax.lax.conv (NCHW) with the input channels split over 'model': a partial sum, reduced before the relu."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"c": "model"})
def f(x: Tensor["batch", "c", "h", "w"], k: Tensor["d", "c", "kh", "kw"],
      k2: Tensor["c", "d", "kh", "kw"]) -> Tensor["batch", "c", "h", "w"]:
    y = jax.nn.relu(jax.lax.conv(x, k, (1, 1), "SAME"))
    return jax.lax.conv(y, k2, (1, 1), "SAME")


def inputs():
    rng = np.random.default_rng(1303)
    return (rng.standard_normal((4, 8, 6, 6)).astype(np.float32), rng.standard_normal((5, 8, 3, 3)).astype(np.float32),
            rng.standard_normal((8, 5, 3, 3)).astype(np.float32))
