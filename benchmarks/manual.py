"""The ``manual`` variants: what an expert writes by hand with ``jax.shard_map``.

Megatron-style tensor parallelism: column-parallel first matmuls (heads, d_ff split),
row-parallel second matmuls with one all-reduce each, a vocab-parallel embedding
(masked local lookup + all-reduce) and a vocab-parallel cross-entropy that never
gathers the logits (max, sum of exp and the picked logit reduced over 'model').
Gradients come from ``jax.grad`` through ``shard_map`` (``check_vma=True``), as an
expert would take them.  Each builder takes the mesh and returns a global callable
with the same signature as the single-device function in ``benchmarks/cases.py``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

__all__ = ["ffn", "block", "vocab_ce", "dp_mlp", "lm_loss"]


def _shard(mesh: Mesh, in_specs: tuple, out_specs: P):
    return lambda local: jax.shard_map(local, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=True)


def ffn(mesh: Mesh):
    @_shard(mesh, (P("batch"), P(None, "model"), P("model"), P("model", None)), P("batch"))
    def local(x, w1, b1, w2):
        h = jax.nn.gelu(jnp.einsum("bld,df->blf", x, w1) + b1)  # column-parallel: no communication
        return x + jax.lax.psum(jnp.einsum("blf,fd->bld", h, w2), "model")  # row-parallel: one all-reduce

    return local


def _attention(x, norm, wq, wk, wv, wo):
    """Pre-norm causal self-attention on this device's heads; returns a partial sum over 'model'."""
    length = x.shape[1]
    causal = jnp.tril(jnp.ones((length, length), dtype=bool))
    h = x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-6) * norm
    q, k, v = (jnp.einsum("bld,dhk->blhk", h, w) for w in (wq, wk, wv))
    scores = jnp.einsum("bqhk,bshk->bhqs", q, k) / jnp.sqrt(q.shape[-1])
    probs = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
    return jnp.einsum("bhqs,bshk,hkd->bqd", probs, v, wo)


def _layer_norm_ffn(x, norm, w1, w2):
    """Layer norm + GELU feed-forward on this device's d_ff block; a partial sum over 'model'."""
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    h = (x - mu) / jnp.sqrt(var + 1e-5) * norm
    return jnp.einsum("blf,fd->bld", jax.nn.gelu(jnp.einsum("bld,df->blf", h, w1)), w2)


def block(mesh: Mesh):
    heads, ff_in, ff_out = P(None, "model", None), P(None, "model"), P("model", None)
    specs = (P("batch"), P(), heads, heads, heads, P("model", None, None), P(), ff_in, ff_out)

    @_shard(mesh, specs, P("batch"))
    def local(x, norm1, wq, wk, wv, wo, norm2, w1, w2):
        x = x + jax.lax.psum(_attention(x, norm1, wq, wk, wv, wo), "model")
        return x + jax.lax.psum(_layer_norm_ffn(x, norm2, w1, w2), "model")

    return local


def _vocab_start(vocab_local: int):
    return jax.lax.axis_index("model") * vocab_local


def _embed(table, ids):
    """Vocab-parallel embedding: look up the ids in this device's rows, zeros elsewhere, all-reduce."""
    local = ids - _vocab_start(table.shape[0])
    mine = (local >= 0) & (local < table.shape[0])
    rows = jnp.where(mine[..., None], table[jnp.where(mine, local, 0)], 0.0)
    return jax.lax.psum(rows, "model")


def _cross_entropy(logits, targets):
    """Vocab-parallel cross-entropy per token; ``logits`` holds this device's vocab block."""
    top = jax.lax.pmax(jax.lax.stop_gradient(logits.max(-1)), "model")  # for stability only
    sum_exp = jax.lax.psum(jnp.exp(logits - top[..., None]).sum(-1), "model")
    local = targets - _vocab_start(logits.shape[-1])
    mine = (local >= 0) & (local < logits.shape[-1])
    picked = jnp.take_along_axis(logits, jnp.where(mine, local, 0)[..., None], axis=-1)[..., 0]
    picked = jax.lax.psum(jnp.where(mine, picked, 0.0), "model")
    return jnp.log(sum_exp) + top - picked


def vocab_ce(mesh: Mesh):
    @_shard(mesh, (P("batch"), P("batch"), P("model", None), P(None, "model")), P())
    def local(tokens, targets, embed, unembed):
        x = _embed(embed, tokens)
        logits = jnp.einsum("bld,dv->blv", jnp.tanh(x), unembed)
        return jax.lax.pmean(_cross_entropy(logits, targets).mean(), "batch")

    return local


def dp_mlp(mesh: Mesh):
    @_shard(mesh, (P("batch"), P(), P(), P()), P("batch"))
    def local(x, w1, b1, w2):
        return jax.nn.relu(x @ w1 + b1) @ w2

    return local


def lm_loss(mesh: Mesh):
    """``examples/transformer_lm.py``'s loss: Megatron layers, tied vocab-parallel embedding."""
    rep2, heads, ff_in, ff_out = P(), P(None, None, "model", None), P(None, None, "model"), P(None, "model", None)
    specs = (P("batch"), P("batch"), P("model", None), rep2, heads, heads, heads, P(None, "model", None, None),
             rep2, ff_in, ff_out, P())

    @_shard(mesh, specs, P())
    def local(tokens, targets, embed, norm1, wq, wk, wv, wo, norm2, w1, w2, norm_f):
        x = _embed(embed, tokens)
        for i in range(wq.shape[0]):
            x = x + jax.lax.psum(_attention(x, norm1[i], wq[i], wk[i], wv[i], wo[i]), "model")
            x = x + jax.lax.psum(_layer_norm_ffn(x, norm2[i], w1[i], w2[i]), "model")
        h = x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-6) * norm_f
        logits = jnp.einsum("bld,vd->blv", h, embed)
        return jax.lax.pmean(_cross_entropy(logits, targets).mean(), "batch")

    def loss(tokens, targets, embed, norm1, wq, wk, wv, wo, norm2, w1, w2, norm_f):  # keywords, as optax steps call it
        return local(tokens, targets, embed, norm1, wq, wk, wv, wo, norm2, w1, w2, norm_f)

    return loss
