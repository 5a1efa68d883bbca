"""Axes computed from the rank as real code writes them: ``jnp.sort(x, axis=x.ndim - 1)``,
``jnp.mean(h, axis=h.ndim - 1)`` over a split dim, ``jnp.sum(h, axis=tuple(range(1, h.ndim)))`` (a per-example
loss), ``jnp.max(h, axis=-(x.ndim - 1))``.  ``x.ndim`` is the rank, known when rewriting, and int arithmetic
and ``tuple``/``range`` of known ints are computed.  Before, each axis was "not a literal" (found by the
second attack of session 16)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "seq", "d"], w: Tensor["d", "d_ff"]):
    h = x @ w
    s = jnp.sort(x, axis=x.ndim - 1)
    m = jnp.mean(h, axis=h.ndim - 1)
    per_example = jnp.sum(h * h, axis=tuple(range(1, h.ndim)))
    return s, m, per_example, jnp.max(h, axis=-(x.ndim - 1))


def inputs():
    rng = np.random.default_rng(408)
    return rng.standard_normal((4, 6, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32) * 0.3
