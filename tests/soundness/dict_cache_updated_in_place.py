"""A KV cache held in a ``TypedDict``, updated the way inference code writes it: copied (``dict(cache)``,
``cache.copy()``, ``{**cache, ...}``), items assigned in place (``cache["k"] = ...``), and returned under the
TypedDict's return hint (``-> Cache``, each field pinned to its hint's layout; a NamedTuple hint likewise).  Before,
"assignment to 'cache["k"]'" and "return hint 'Cache' is not a Tensor hint" (two forced changes), and
``{**cache}`` was read as a Python value."""
from typing import NamedTuple, TypedDict

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Cache(TypedDict):
    k: Tensor["batch", "max_len", "heads", "hd"]
    v: Tensor["batch", "max_len", "heads", "hd"]


class Step(NamedTuple):
    out: Tensor["batch", "heads", "hd"]
    cache: Cache


@mesh(batch=2, model=4, rules={"heads": "model"})
def write(cache: Cache, k: Tensor["batch", "step", "heads", "hd"], v: Tensor["batch", "step", "heads", "hd"],
          pos: Tensor[()]) -> Cache:
    cache = dict(cache)
    cache["k"] = jax.lax.dynamic_update_slice_in_dim(cache["k"], k, pos, axis=1)
    cache["v"] = jax.lax.dynamic_update_slice_in_dim(cache["v"], v * 2, pos, axis=1)
    return cache


@mesh(batch=2, model=4, rules={"heads": "model"})
def attend(cache: Cache, q: Tensor["batch", "heads", "hd"], w: Tensor["hd", "hd"], pos: Tensor[()]) -> Step:
    new = cache.copy()
    new["k"] = new["k"].at[:, pos].set(q @ w)
    scores = jnp.einsum("bhd,bthd->bht", q, new["k"])
    out = jnp.einsum("bht,bthd->bhd", jax.nn.softmax(scores, axis=-1), new["v"])
    return Step(out=out, cache={**new, "v": new["v"] * 0.5})


@mesh(batch=2, model=4, rules={"heads": "model"})
def summed(cache: Cache, w: Tensor["hd", "hd"]) -> Cache:
    out = {"k": cache["k"], "v": cache["v"]}
    out["v"] = jnp.einsum("bthd,de->bthe", out["v"], w).sum(axis=2, keepdims=False)[:, :, None] + out["k"]
    return out


def inputs():
    rng = np.random.default_rng(17)

    def cache():
        return {"k": rng.standard_normal((4, 6, 8, 2)).astype(np.float32),
                "v": rng.standard_normal((4, 6, 8, 2)).astype(np.float32)}

    k = rng.standard_normal((4, 1, 8, 2)).astype(np.float32)
    q, w = rng.standard_normal((4, 8, 2)).astype(np.float32), rng.standard_normal((2, 2)).astype(np.float32)
    return {"write": (cache(), k, k * 3, np.int32(4)), "attend": (cache(), q, w, np.int32(2)), "summed": (cache(), w)}
