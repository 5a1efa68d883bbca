"""The fix the refusal of TABLE[ids] suggests: name the module table's dims, then look the split
ids up in it (a replicated table, so a local lookup)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

TABLE = jnp.arange(4.0) * 10


@mesh(model=8)
def f(ids: Tensor["model"]) -> Tensor["model"]:
    t: Tensor["rows"] = TABLE
    return t[ids]


def inputs():
    return (np.arange(64) % 4,)
