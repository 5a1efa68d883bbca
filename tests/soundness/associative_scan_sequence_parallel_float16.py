"""The LRU recurrence in float16 with its length split over 'model' (sequence parallel) and a decay leaf whole
along the length (``jnp.repeat``), forward and ``reverse=True``: the whole leaf sliced to each device's block,
the blocks' totals folded in another grouping than one device's tree, so the numbers agree to float16's
precision, gradients included."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


def binary_operator_diag(element_i, element_j):
    a_i, bu_i = element_i
    a_j, bu_j = element_j
    return a_j * a_i, a_j * bu_i + bu_j


@mesh(batch=2, model=4, rules={"length": "model"})
def f(lam: Tensor["d_hidden"], u: Tensor["batch", "length", "d_hidden"]):
    def one(x):
        elements = (jnp.repeat(lam[None, ...], x.shape[0], axis=0), x)
        _, h = jax.lax.associative_scan(binary_operator_diag, elements)
        _, back = jax.lax.associative_scan(binary_operator_diag, elements, reverse=True)
        return h + back

    return jax.vmap(one)(u)


def inputs():
    rng = np.random.default_rng(37)
    return (rng.uniform(0.6, 0.95, size=(8,)).astype(np.float16), rng.normal(size=(4, 16, 8)).astype(np.float16))
