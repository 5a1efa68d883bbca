"""An array or None known only when traced (``m = jnp.sum(h, axis=0) if shift > 0 else None``, a partial sum)
carried into a Python loop whose body tests it, needs it whole and halves it: converted once before the loop
where it is an array (``m = mr.psum(m, ...) if m is not None else None``), still an array or None after it, and
returned.  ``f`` runs with ``shift=1``, ``g`` (the same body) with ``shift=0``; gradients of both.  Before: the
conversion before the loop was made on None too (``g``: 'NoneType' object has no attribute 'dtype')."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], shift: int = 1):
    h = x @ w
    m = jnp.sum(h, axis=0) if shift > 0 else None
    acc = h
    for _ in range(3):
        if m is not None:
            acc = acc + jax.nn.relu(m)
            m = m * 0.5
        acc = acc * 1.5
    return acc, m


@mesh(batch=2, model=4, rules={"e": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"], shift: int = 0):
    h = x @ w
    m = jnp.sum(h, axis=0) if shift > 0 else None
    acc = h
    for _ in range(3):
        if m is not None:
            acc = acc + jax.nn.relu(m)
            m = m * 0.5
        acc = acc * 1.5
    return acc, m


def inputs():
    rng = np.random.default_rng(1411)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = (rng.standard_normal((8, 16)) / 3).astype(np.float32)
    return {"f": (x, w, 1), "g": (x, w, 0)}
