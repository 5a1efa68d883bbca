"""A ``@jax.vmap`` helper that returns an array or None as a static value says (``x * 2 if x.shape[0] > 4 else
None``): JAX stacks its rows' arrays, or gives None.  The caller gets an array or None (its rows' layout) and
``if m is None:`` keeps both branches, the other one with a collective of its own: ``f`` (d = 8) takes the
array, ``g`` (d = 4) None.  Before: the result was taken for an array ("'m is None' is False in this version"),
the other branch left unrewritten: wrong numbers for ``g`` (a local mean)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@jax.vmap
def rows(x):
    return x * 2.0 if x.shape[0] > 4 else None


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"]):
    m = rows(x)
    if m is None:
        return x @ w - jnp.mean(x), m
    return m @ w, m


@mesh(batch=2, model=4, rules={"e": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"]):
    m = rows(x)
    if m is None:
        return x @ w - jnp.mean(x), m
    return m @ w, m


def inputs():
    rng = np.random.default_rng(4219)
    return {"f": (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)),
            "g": (rng.standard_normal((4, 4)).astype(np.float32), rng.standard_normal((4, 16)).astype(np.float32))}
