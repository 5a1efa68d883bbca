"""A product of float16 rotation-like matrices along a time axis split over the mesh (see
associative_scan_matmul_split_dim), forward and ``reverse=True``, the batch split too: the blocks' products are
folded in another grouping than one device's tree, so the numbers agree to float16's precision, not bit for bit."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


@mesh(batch=2, model=4, rules={"time": "model"})
def f(m: Tensor["batch", "time", "i", "j"]):
    fwd = jax.lax.associative_scan(jnp.matmul, m, axis=1)
    back = jax.lax.associative_scan(lambda a, b: a @ b, m, reverse=True, axis=1)
    return fwd + back


def inputs():
    rng = np.random.default_rng(32)
    return ((np.eye(4) + 0.2 * rng.standard_normal((2, 16, 4, 4))).astype(np.float16),)
