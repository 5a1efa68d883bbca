"""``jnp.take`` by ids written in the code (``jnp.array([0, 5, 7, -9])``, a 2-D literal): whole on every
device, their dims named after them (``ids?``); along a split e (a masked local lookup, ``mode="fill"``) and
an unsplit d (default mode: an out-of-range id gives NaN, as on one device; ``mode="clip"``); gradients through
the tables.  Before, "jax.numpy.take has no meshify rule" with a fix to unsplit batch (found by the user-style
attack)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "e"], y: Tensor["batch", "d"]):
    ids = jnp.array([0, 5, 7, -9])
    a = jnp.take(x, ids, axis=1, mode="fill", fill_value=1.0)
    b = jnp.take(y, ids, axis=1)
    c = jnp.take(y, jnp.array([[1, 2], [3, 0]]), axis=1, mode="clip")
    return a, jnp.where(jnp.isnan(b), 0.0, b), c


def inputs():
    rng = np.random.default_rng(319)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((4, 6)).astype(np.float32)
