"""jnp.max(x, axis=1, where=mask, initial=-1e9) over a split dim."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], mask: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.max(x, axis=1, where=mask, initial=-1e9)


def inputs():
    rng = np.random.default_rng(649)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    return x, x > -0.3
