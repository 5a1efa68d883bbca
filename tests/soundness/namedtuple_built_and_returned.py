"""NamedTuples of the module built inside @mesh functions, as model code builds them: ``Out(logits=h, loss=l)``
returned without a return hint (its fields leave in their layouts, the loss's partial sum completed, rebuilt
as ``Out(...)``); a ``Cache(k, v)`` built in a helper and read by field; a training step returning
``(loss, Params(w=..., b=...))`` with SGD by field; ``cache._replace(v=...)``; a NamedTuple of NamedTuples returned.  Before, "Out has no meshify rule" (a NamedTuple call was
an unknown function) and "a NamedTuple result is not rebuilt by meshify yet" (found by the second attack of
session 16)."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Params(NamedTuple):
    w: Tensor["d", "d_ff"]
    b: Tensor["d_ff"]


class Out(NamedTuple):
    logits: jax.Array
    loss: jax.Array


class Cache(NamedTuple):
    k: jax.Array
    v: jax.Array


def project(x, p):
    h = x @ p.w + p.b
    return Cache(jnp.tanh(h), v=h * 0.5)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], p: Params):
    cache = project(x, p)
    cache = cache._replace(v=cache.v * 2.0)
    logits = cache.k + cache.v
    return Out(logits=logits, loss=jnp.mean(logits ** 2))


def loss_fn(p, x):
    return jnp.mean(jnp.tanh(x @ p.w + p.b) ** 2)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def step(x: Tensor["batch", "d"], p: Params):
    loss, grads = jax.value_and_grad(loss_fn)(p, x)
    return loss, Params(w=p.w - 0.1 * grads.w, b=p.b - 0.1 * grads.b)


class Nested(NamedTuple):
    out: Out
    cache: Cache


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def nest(x: Tensor["batch", "d"], p: Params):
    h = x @ p.w
    return Nested(out=Out(h, jnp.mean(h)), cache=Cache(k=jnp.tanh(h), v=h * 2.0))


def inputs():
    rng = np.random.default_rng(415)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    p = Params(rng.standard_normal((8, 16)).astype(np.float32) * 0.4, rng.standard_normal((16,)).astype(np.float32))
    return {"f": (x, p), "step": (x, p), "nest": (x, p)}
