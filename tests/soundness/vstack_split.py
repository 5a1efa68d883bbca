"""jnp.vstack of two arrays whose feature dim is split (joined along the unsplit rows)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=4, rules={"d": "model"})
def f(a: Tensor["rows", "d"], b: Tensor["rows", "d"]) -> Tensor["rows2", "d"]:
    return jnp.vstack([a, b])


def inputs():
    rng = np.random.default_rng(48)
    return rng.standard_normal((3, 8)).astype(np.float32), rng.standard_normal((3, 8)).astype(np.float32)
