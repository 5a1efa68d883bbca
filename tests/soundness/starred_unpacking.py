"""Starred unpacking of values meshify holds item by item: ``q, *kv = jnp.split(x @ w, 3, -1)`` (a fused
projection split over 'model'), ``*ab, c = (x, 2 * x, 3 * x)``, and of a partial sum's sections in float16 (f:
float32, g: float16 through the same code).  Before, "unpacking 3 values into 2 names" (found by the attack
on fused splits, session 17)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


@mesh(batch=2, model=4, rules={"qkv": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "qkv"]):
    q, *kv = jnp.split(x @ w, 3, axis=-1)
    *ab, c = (x, 2 * x, 3 * x)
    return q * kv[0] + kv[1], ab[1] - c + ab[0]


@mesh(batch=2, model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"]):
    first, *rest = jnp.split(x @ w, 4, axis=-1)
    *_, total = (first, jnp.sum(rest[1], axis=0))
    return first + rest[-1], jnp.sum(rest[0], axis=0), total


def inputs():
    rng = np.random.default_rng(413)
    x, w = rng.standard_normal((4, 8)), rng.standard_normal((8, 24)) * 0.4
    return {"f": (x.astype(np.float32), w.astype(np.float32)),
            "g": (x.astype(np.float16), rng.standard_normal((8, 16)).astype(np.float16))}
