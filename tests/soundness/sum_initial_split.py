"""jnp.sum(x, axis=1, initial=1.0) over a split dim."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch"]:
    return jnp.sum(x, axis=1, initial=1.0)


def inputs():
    rng = np.random.default_rng(622)
    return (rng.standard_normal((4, 8)).astype(np.float32),)
