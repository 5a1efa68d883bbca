"""One batched decoding step as inference code writes it: each sequence's new key written into the cache
at its own position (``cache.at[jnp.arange(B), pos].set(k)``), rotary embeddings at those positions
computed in place (``jnp.arange(0, D, 2)``, ``pos[:, None] * freqs[None, :]``), attention over the cache,
and the top 4 of the next-token logits over a split vocabulary with their ids (``jax.lax.top_k``), the
log-probability of a given next token picked per row (``logp[jnp.arange(B), nxt]``); batch, heads and
vocab split, positions negative and past the cache's end."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def rope_at(x, pos):
    D = x.shape[-1]
    freqs = 1.0 / (10000.0 ** (jnp.arange(0, D, 2, dtype=jnp.float32) / D))
    ang = pos[:, None].astype(jnp.float32) * freqs[None, :]
    cos, sin = jnp.cos(ang)[:, None, :], jnp.sin(ang)[:, None, :]
    x1, x2 = x[..., : D // 2], x[..., D // 2:]
    return jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model", "vocab": "model"})
def f(cache: Tensor["batch", "seq", "heads", "d_head"], h: Tensor["batch", "d_model"],
      wq: Tensor["d_model", "heads", "d_head"], wk: Tensor["d_model", "heads", "d_head"],
      head: Tensor["d_model", "vocab"], pos: Tensor["batch"], nxt: Tensor["batch"]):
    B = h.shape[0]
    q = rope_at(jnp.einsum("bd,dhk->bhk", h, wq), pos)
    k = rope_at(jnp.einsum("bd,dhk->bhk", h, wk), pos)
    cache = cache.at[jnp.arange(B), pos].set(k)
    scores = jnp.einsum("bhk,bshk->bhs", q, cache) / jnp.sqrt(q.shape[-1])
    context = jnp.einsum("bhs,bshk->bhk", jax.nn.softmax(scores, axis=-1), cache)
    logits = jnp.einsum("bd,dv->bv", h + jnp.einsum("bhk,dhk->bd", context, wq), head)
    top, ids = jax.lax.top_k(logits, 4)
    logp = jax.nn.log_softmax(logits, axis=-1)
    return jnp.mean(top) + jnp.mean(ids.astype(jnp.float32)) * 1e-3 + jnp.mean(logp[jnp.arange(B), nxt])


def inputs():
    rng = np.random.default_rng(101)
    return (rng.standard_normal((4, 6, 8, 4)).astype(np.float32), rng.standard_normal((4, 16)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8, 4)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8, 4)).astype(np.float32),
            0.3 * rng.standard_normal((16, 32)).astype(np.float32), np.array([0, 5, -1, 7], np.int32),
            np.array([3, -2, 40, 31], np.int32))
