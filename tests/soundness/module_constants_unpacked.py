"""Module constants bound by tuple assignment (``HEADS, KV_HEADS, HEAD_DIM = 8, 4, 2``), as scripts write a
model's sizes: each name is its literal (grouped-query attention's ``jnp.repeat(k, HEADS // KV_HEADS, axis=2)``,
a reshape by ``HEADS``).  Before, "per-element repeats (an array)": the names were values meshify could not read."""
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh

EXPECT = "match"

HEADS, KV_HEADS, HEAD_DIM = 8, 4, 2


@mesh(batch=2, model=4, rules={"heads": "model", "kv_heads": "model"})
def f(q: Annotated[jax.Array, "batch", "length", "d_model"],
      k: Annotated[jax.Array, "batch", "length", "kv_heads", "head_dim"]):
    B, L, _ = q.shape
    qh = q.reshape(B, L, HEADS, HEAD_DIM)
    kh = jnp.repeat(k, HEADS // KV_HEADS, axis=2)
    return jnp.einsum("blhd,bmhd->bhlm", qh, kh)


def inputs():
    rng = np.random.default_rng(321)
    return (rng.standard_normal((2, 4, 16)).astype(np.float32), rng.standard_normal((2, 4, 4, 2)).astype(np.float32))
