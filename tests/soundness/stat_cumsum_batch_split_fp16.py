"""cumsum along the batch-split dim (over time, say) of float16 values; and along an unsplit dim."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 5e-3


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "t"]) -> tuple[Tensor["batch", "t"], Tensor["batch", "t"]]:
    return jnp.cumsum(x, axis=0), jnp.cumsum(x, 1)


def inputs():
    rng = np.random.default_rng(7020)
    return (rng.standard_normal((8, 4)).astype(np.float16),)
