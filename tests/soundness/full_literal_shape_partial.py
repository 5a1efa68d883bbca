"""jnp.full((4,), s) (a literal shape) where s is a partial sum; the result meets a replicated vector."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=8, rules={"d": "model"})
def f(x: Tensor["batch", "d"], b: Tensor["batch"]) -> Tensor["batch"]:
    s = jnp.sum(x)
    return b + jnp.full((4,), s)


def inputs():
    rng = np.random.default_rng(43)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((4,)).astype(np.float32)
