"""``jax.nn.softmax`` / ``log_softmax`` with ``axis=None`` written: over every dim (JAX's meaning), split ones
included.  Before: an explicit ``axis=None`` was read as the default (the last dim), so each device normalised
its own block over a split batch (log_softmax off by 2.56; attack, session 28).  ``logsumexp(axis=None)`` and
``axis=(0, 1)`` were right and stay so."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=8, rules={"batch": "data"})
def batch_split(x: Tensor["batch", "vocab"]):
    return jax.nn.log_softmax(x, axis=None), jax.nn.softmax(x, axis=None), jax.nn.logsumexp(x, axis=None)


@mesh(data=2, model=4, rules={"batch": "data", "vocab": "model"})
def both_split(x: Tensor["batch", "vocab"]):
    return jax.nn.log_softmax(x, axis=(0, 1)), jax.nn.softmax(x, axis=None), jax.nn.softmax(x)


@mesh(data=2, model=4, rules={"batch": "data"})
def last_unsplit(x: Tensor["batch", "vocab"]):
    return jax.nn.softmax(x, axis=None), jax.nn.log_softmax(x, None)


def inputs():
    x = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    return {"batch_split": (x,), "both_split": (x,), "last_unsplit": (x,)}
