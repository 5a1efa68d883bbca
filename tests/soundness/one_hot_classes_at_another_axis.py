"""``jax.nn.one_hot(ids, n, axis=...)`` with the classes placed before the last dim (``axis=1``, ``axis=0``,
``axis=-3``), whole or split over 'model' (each device its block of the classes, moved to that axis), with ids out
of range and negative, and a bfloat16 dtype.  Before: "one_hot(axis=...)" was refused (found by the fuzz's struct
parameters, seed 5301)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(ids: Tensor["batch", "seq"], w: Tensor["vocab", "d"]) -> Tensor["batch", "d", "seq"]:
    oh = jax.nn.one_hot(ids, w.shape[0], axis=1)
    return jnp.einsum("bvs,vd->bds", oh, w)


@mesh(batch=2, model=4, rules={"classes": "model"})
def g(ids: Tensor["batch", "seq"], w: Tensor["classes", "d"]) -> Tensor["classes", "batch", "seq"]:
    a = jax.nn.one_hot(ids, w.shape[0], axis=0, dtype=jnp.bfloat16) * 2
    return a + jax.nn.one_hot(ids, w.shape[0], axis=-3) * jnp.sum(w, axis=1)[:, None, None]


@mesh(model=8)
def h(ids: Tensor["batch", "seq"], w: Tensor["classes", "d"]) -> Tensor["batch", "classes", "seq"]:
    return jax.nn.one_hot(ids, w.shape[0], axis=1) * jnp.tanh(w[:, 0])[None, :, None]


def inputs():
    rng = np.random.default_rng(3)
    ids = rng.integers(-2, 18, (4, 6)).astype(np.int32)
    w = rng.standard_normal((16, 3)).astype(np.float32)
    return {"f": (ids, w), "g": (ids, w), "h": (ids, w)}
