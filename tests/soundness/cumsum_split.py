"""jnp.cumsum(x, axis=1) over a split dim: local cumsum plus the earlier shards' totals."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return jnp.cumsum(x, axis=1)


def inputs():
    rng = np.random.default_rng(999)
    return (rng.standard_normal((4, 8)).astype(np.float32),)
