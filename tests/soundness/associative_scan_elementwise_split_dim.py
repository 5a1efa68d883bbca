"""jax.lax.associative_scan with an elementwise combine (jnp.add, operator.add, jax.lax.mul, jnp.maximum,
jax.lax.min, jnp.logaddexp), forward and reverse=True, along a dim split over the mesh: a causal linear attention's
running sum of key-value outer products over a split sequence, as public code writes it.  Before: 'associative_scan
along 'time' ..., split over 'model': a scan across devices is not modelled'.  Now it runs as jax.lax's cumulative
op of that combine (mr.cumulative: the local scan combined with the earlier blocks' totals, one all-gather).
``partial``: a partial sum scanned along a whole dim (found by the fuzz: 'associative_scan of 'v4', a partial sum')
is completed first."""
import operator

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def linear_attention(q, k, v):
    fk, fq = jax.nn.elu(k) + 1, jax.nn.elu(q) + 1
    kv = jax.lax.associative_scan(jnp.add, jnp.einsum("bthk,bthv->bthkv", fk, v), axis=1)
    z = jax.lax.associative_scan(operator.add, fk, axis=1)
    num = jnp.einsum("bthk,bthkv->bthv", fq, kv)
    return num / jnp.einsum("bthk,bthk->bth", fq, z)[..., None]


@mesh(batch=2, model=4, rules={"time": "model"})
def f(q: Tensor["batch", "time", "heads", "d"], k: Tensor["batch", "time", "heads", "d"],
      v: Tensor["batch", "time", "heads", "d"]) -> Tensor["batch", "time", "heads", "d"]:
    return linear_attention(q, k, v)


@mesh(batch=8, rules={"time": "batch", "batch": None})
def combines(x: Tensor["batch", "time", "d"]):
    gate = jax.nn.sigmoid(x)
    prod = jax.lax.associative_scan(jax.lax.mul, gate, axis=1, reverse=True)
    hi = jax.lax.associative_scan(jnp.maximum, x, axis=-2)
    lo = jax.lax.associative_scan(jax.lax.min, x, axis=1, reverse=True)
    lse = jax.lax.associative_scan(jnp.logaddexp, x, axis=1)
    return prod * hi + lo - 0.1 * lse


@mesh(batch=2, model=4, rules={"d": "model"})
def partial(x: Tensor["batch", "time", "d"], w: Tensor["d", "e"]):
    y = x @ w  # a partial sum over 'model', scanned along whole dims: completed first
    return (jax.lax.associative_scan(jnp.add, y, axis=1), jax.lax.associative_scan(jnp.maximum, y, axis=1, reverse=True),
            jax.lax.associative_scan(operator.add, y, axis=-1) * 2.0)


def inputs():
    rng = np.random.default_rng(3213)

    def r(*shape):
        return (rng.standard_normal(shape) * 0.5).astype(np.float32)

    return {"f": (r(4, 8, 4, 2), r(4, 8, 4, 2), r(4, 8, 4, 2)), "combines": (r(2, 16, 3),),
            "partial": (r(4, 6, 8), r(8, 3))}
