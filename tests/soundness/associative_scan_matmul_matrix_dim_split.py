"""``jax.lax.associative_scan(jnp.matmul, m, axis=1)`` where a matrix dim, which the combine contracts, is split
over the mesh (``rules={"i": "model"}``): each device would multiply blocks of rows by blocks of columns.  Refused
where the scan is written, naming the dim and the fix (map it to no mesh axis; the scanned dim may be split)."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"i": "model"})
def f(m: Tensor["batch", "time", "i", "j"]):
    return jax.lax.associative_scan(jnp.matmul, m, axis=1)


def inputs():
    rng = np.random.default_rng(33)
    return ((np.eye(4) + 0.2 * rng.standard_normal((2, 8, 4, 4))).astype(np.float32),)
