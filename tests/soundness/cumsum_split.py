"""jnp.cumsum(x, axis=1) over a split dim (documented as unsupported there)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return jnp.cumsum(x, axis=1)


def inputs():
    rng = np.random.default_rng(999)
    return (rng.standard_normal((4, 8)).astype(np.float32),)
