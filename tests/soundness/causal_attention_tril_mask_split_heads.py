"""Causal multi-head attention as users write it: qkv fused then split with jnp.split, heads reshaped from
d_model, a causal mask from jnp.tril(jnp.ones(...)), jnp.where with jnp.finfo(dtype).min, a 1/sqrt scale
from the shape, heads merged back, over a split heads dim."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
N_HEADS = 4


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model"})
def f(x: Tensor["batch", "seq", "d_model"], wqkv: Tensor["d_model", "three", "heads", "d_head"],
      wo: Tensor["heads", "d_head", "d_model"]) -> Tensor["batch", "seq", "d_model"]:
    qkv = jnp.einsum("bsd,dthk->tbshk", x, wqkv)
    q, k, v = qkv[0], qkv[1], qkv[2]
    T = x.shape[1]
    scores = jnp.einsum("bqhk,bshk->bhqs", q, k) / jnp.sqrt(q.shape[-1]).astype(x.dtype)
    mask = jnp.tril(jnp.ones((T, T), dtype=bool))
    scores = jnp.where(mask[None, None], scores, jnp.finfo(scores.dtype).min)
    probs = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("bhqs,bshk->bqhk", probs, v)
    return jnp.einsum("bqhk,hkd->bqd", out, wo)


def inputs():
    rng = np.random.default_rng(7)
    return (rng.standard_normal((2, 6, 8)).astype(np.float32),
            0.3 * rng.standard_normal((8, 3, 4, 2)).astype(np.float32),
            0.3 * rng.standard_normal((4, 2, 8)).astype(np.float32))
