"""A module-level table indexed by split ids (TABLE[ids]): each device would look its own block of
ids up in its whole copy, a result meshify took for whole (wrong numbers before); refused now."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"

TABLE = jnp.arange(4.0) * 10


@mesh(model=8)
def f(ids: Tensor["model"]) -> Tensor["model"]:
    v: Tensor["model"] = TABLE[ids]
    return v


def inputs():
    return (np.arange(64) % 4,)
