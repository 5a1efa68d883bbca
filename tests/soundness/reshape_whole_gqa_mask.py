"""Grouped-query attention with the kv projection whole (rules={"kv": None}, the fix meshify gives for
fewer kv heads than devices) on a mesh whose batch axis has size 1: nothing of x @ wk is split, and its
reshape must still name its dims (as when split), so that the scores line up with a [length, length]
mask (it was an Opaque value, its einsum dim 'einsum_k' refused by the mask)."""
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh

EXPECT = "match"


@mesh(batch=1, model=8, rules={"q": "model", "kv": None})
def f(x: Annotated[jax.Array, "batch", "length", "d"], wq: Annotated[jax.Array, "d", "q"],
      wk: Annotated[jax.Array, "d", "kv"], heads: int = 8, kv_heads: int = 2) \
        -> Annotated[jax.Array, "batch", "length", "q"]:
    B, L, _ = x.shape
    q = (x @ wq).reshape(B, L, heads, -1)
    k = (x @ wk).reshape(B, L, kv_heads, -1)
    k = jnp.repeat(k, heads // kv_heads, axis=2)
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k)
    mask = jnp.tril(jnp.ones((L, L), dtype=bool))
    probs = jax.nn.softmax(jnp.where(mask[None, None, :, :], scores, -1e9), axis=-1)
    return jnp.einsum("bhqk,bkhd->bqhd", probs, k).reshape(B, L, -1)


def inputs():
    rng = np.random.default_rng(1432)
    return (rng.standard_normal((2, 4, 8)).astype(np.float32), 0.3 * rng.standard_normal((8, 32)).astype(np.float32),
            0.3 * rng.standard_normal((8, 8)).astype(np.float32))
