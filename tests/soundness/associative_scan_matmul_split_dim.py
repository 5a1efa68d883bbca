"""A product of matrices along a time axis split over the mesh, ``jax.lax.associative_scan(jnp.matmul, mats,
axis=1)`` (a linear RNN's transition products, a chain of rotations): the combine is associative but not
commutative, and the trailing matrix dims, which it contracts, are whole.  Each device scans its block and combines
the product of the blocks before it, on its left (``mr.associative_scan``); ``reverse=True`` folds those after it,
also on the left.  A lambda ``a @ b``, ``jnp.matmul`` itself, a module def and a nested one (``b @ a``), on 2x4
and 1x8.  Before: refused
("associative_scan body 'jnp.matmul'")."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def chain(a, b):
    return jnp.matmul(a, b)


@mesh(batch=2, model=4, rules={"time": "model"})
def f(m: Tensor["batch", "time", "i", "j"], v: Tensor["batch", "time", "j"]):
    fwd = jax.lax.associative_scan(jnp.matmul, m, axis=1)
    back = jax.lax.associative_scan(lambda a, b: a @ b, m, reverse=True, axis=1)
    mixed = jax.lax.associative_scan(chain, m, axis=-3)

    def left(a, b):
        return b @ a  # also associative: the product taken from the other side

    other = jax.lax.associative_scan(left, m, axis=1)
    return jnp.einsum("btij,btj->bti", fwd + back - 0.5 * mixed + 0.25 * other, v)


@mesh(model=8, rules={"time": "model"})
def g(m: Tensor["time", "i", "j"]):
    fwd = jax.lax.associative_scan(jnp.matmul, m)
    back = jax.lax.associative_scan(jnp.matmul, m, reverse=True, axis=0)
    return (fwd - back).sum(-1)


def inputs():
    rng = np.random.default_rng(31)
    m = (np.eye(3) + 0.3 * rng.standard_normal((2, 16, 3, 3))).astype(np.float32)
    v = rng.standard_normal((2, 16, 3)).astype(np.float32)
    return {"f": (m, v), "g": (m[0],)}
