"""A KV cache written as inference code writes it, the batch split: prefill at ``(0, 0, 0)`` (a tuple of
constants), decode steps in a ``fori_loop`` at ``(0, P + i, 0)`` (the loop's index beside constants).  Each
split dim is written whole (start 0), so each device writes its own rows.  Before, "dynamic_update_slice writes
part of split dim 'batch'" (a tuple of constants was read as one value, not item by item).  ``carried``: a
``TypedDict`` cache carried by a ``fori_loop`` whose body returns it as a dict literal (was "the fori_loop carry
changes layout": a TypedDict and a dict differed by their class names)."""
from typing import Annotated, TypedDict

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"kv_heads": "model"})
def prefill(cache: Annotated[jax.Array, "batch", "max_len", "kv_heads"],
            k: Annotated[jax.Array, "batch", "length", "kv_heads"]):
    return jax.lax.dynamic_update_slice(cache, k * 2.0, (0, 0, 0))


@mesh(batch=8)
def decode(cache: Annotated[jax.Array, "batch", "max_len"], tok: Annotated[jax.Array, "batch"]):
    P = 3

    def body(i, cache):
        return jax.lax.dynamic_update_slice(cache, (tok * i)[:, None], (0, P + i))

    return jax.lax.fori_loop(0, 4, body, cache)


class Cache(TypedDict):
    k: Annotated[jax.Array, "batch", "max_len"]


def step(cache, tok, pos):
    ck = cache["k"]
    ck = ck.at[:, pos].set(tok)
    return {"k": ck}


@mesh(batch=2)
def carried(cache: Cache, tok: Annotated[jax.Array, "batch"]):
    def body(i, cache):
        return step(cache, tok * i, i)

    return jax.lax.fori_loop(0, 4, body, cache)


def inputs():
    rng = np.random.default_rng(311)
    return {"prefill": (np.zeros((4, 16, 8), np.float32), rng.standard_normal((4, 5, 8)).astype(np.float32)),
            "decode": (np.zeros((8, 16), np.float32), rng.standard_normal(8).astype(np.float32)),
            "carried": ({"k": np.zeros((4, 16), np.float32)}, rng.standard_normal(4).astype(np.float32))}
