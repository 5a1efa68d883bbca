"""jnp.var(where=mask) over a split dim (a masked variance)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], m: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.var(x, axis=1, where=m > 0)


def inputs():
    rng = np.random.default_rng(7007)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((4, 8)).astype(np.float32))
