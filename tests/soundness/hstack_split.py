"""jnp.hstack of two batch-split arrays (joined along their unsplit feature dim)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def f(a: Tensor["batch", "d"], b: Tensor["batch", "d"]) -> Tensor["batch", "d2"]:
    return jnp.hstack([a, b])


def inputs():
    rng = np.random.default_rng(47)
    return rng.standard_normal((16, 3)).astype(np.float32), rng.standard_normal((16, 3)).astype(np.float32)
