"""The benchmarked math, written once for one device with meshify's ``Tensor`` hints.

Each ``@mesh`` function here is the ``meshify`` variant; its ``.reference`` (the plain,
untouched function) is what the ``gspmd`` variant jits with ``NamedSharding`` inputs and
what the single-device run computes.  The hand-written ``manual`` variants live in
``benchmarks/manual.py``; ``lm_step`` uses ``examples/transformer_lm.py`` as it is.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def ffn(x: Tensor["batch", "length", "d_model"],
        w1: Tensor["d_model", "d_ff"],
        b1: Tensor["d_ff"],
        w2: Tensor["d_ff", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    """A Transformer feed-forward block with its residual (examples/hybrid.py)."""
    h = jax.nn.gelu(jnp.einsum("bld,df->blf", x, w1) + b1)
    return x + jnp.einsum("blf,fd->bld", h, w2)


@mesh(batch=2, model=4, rules={"heads": "model", "d_ff": "model"})
def block(x: Tensor["batch", "length", "d_model"],
          norm1: Tensor["d_model"],
          wq: Tensor["d_model", "heads", "d_head"],
          wk: Tensor["d_model", "heads", "d_head"],
          wv: Tensor["d_model", "heads", "d_head"],
          wo: Tensor["heads", "d_head", "d_model"],
          norm2: Tensor["d_model"],
          w1: Tensor["d_model", "d_ff"],
          w2: Tensor["d_ff", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    """A pre-norm Transformer block: causal attention and a GELU feed-forward."""
    return _pre_norm_block(x, norm1, wq, wk, wv, wo, norm2, w1, w2)


@mesh(batch=4, model=2, rules={"heads": "model", "d_ff": "model", "d_model": "batch"})
def fsdp_tp(x: Tensor["batch", "length", "d_model"],
            norm1: Tensor["d_model"],
            wq: Tensor["d_model", "heads", "d_head"],
            wk: Tensor["d_model", "heads", "d_head"],
            wv: Tensor["d_model", "heads", "d_head"],
            wo: Tensor["heads", "d_head", "d_model"],
            norm2: Tensor["d_model"],
            w1: Tensor["d_model", "d_ff"],
            w2: Tensor["d_ff", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    """The pre-norm (GPT-2-style) block under FSDP over 'batch' (weights split on d_model, gathered before use) x TP
    over 'model' (heads and d_ff split), issue #15's ``fsdp_tp`` case."""
    return _pre_norm_block(x, norm1, wq, wk, wv, wo, norm2, w1, w2)


def _pre_norm_block(x, norm1, wq, wk, wv, wo, norm2, w1, w2):
    length = x.shape[1]
    causal = jnp.arange(length)[:, None] >= jnp.arange(length)[None, :]
    h = x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-6) * norm1
    q = jnp.einsum("bld,dhk->blhk", h, wq)
    k = jnp.einsum("bld,dhk->blhk", h, wk)
    v = jnp.einsum("bld,dhk->blhk", h, wv)
    scores = jnp.einsum("bqhk,bshk->bhqs", q, k) / jnp.sqrt(q.shape[-1])
    probs = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
    x = x + jnp.einsum("bhqs,bshk,hkd->bqd", probs, v, wo)
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    h = (x - mu) / jnp.sqrt(var + 1e-5) * norm2
    return x + jnp.einsum("blf,fd->bld", jax.nn.gelu(jnp.einsum("bld,df->blf", h, w1)), w2)


@mesh(batch=2, model=4, rules={"vocab": "model"})
def vocab_ce(tokens: Tensor["batch", "length"],
             targets: Tensor["batch", "length"],
             embed: Tensor["vocab", "d_model"],
             unembed: Tensor["d_model", "vocab"]) -> Tensor[()]:
    """Embedding lookup, vocab-sharded unembedding and mean cross-entropy."""
    x: Tensor["batch", "length", "d_model"] = embed[tokens]
    logits = jnp.einsum("bld,dv->blv", jnp.tanh(x), unembed)
    picked = jnp.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
    return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - picked)


@mesh(batch=8)
def dp_mlp(x: Tensor["batch", "d_in"],
           w1: Tensor["d_in", "d_hidden"],
           b1: Tensor["d_hidden"],
           w2: Tensor["d_hidden", "d_out"]) -> Tensor["batch", "d_out"]:
    """A 2-layer MLP, batch split over 8 devices (examples/data_parallel.py)."""
    h = jax.nn.relu(x @ w1 + b1)
    return h @ w2
