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


@mesh(data=4, model=2, rules={"batch": "data", "d_model": "data", "heads": "model", "d_ff": "model"})
def fsdp_tp(x: Tensor["batch", "length", "d_model"],
            ln1_scale: Tensor["layers", "d_model"],
            ln1_bias: Tensor["layers", "d_model"],
            wq: Tensor["layers", "d_model", "heads", "d_head"],
            wk: Tensor["layers", "d_model", "heads", "d_head"],
            wv: Tensor["layers", "d_model", "heads", "d_head"],
            wo: Tensor["layers", "heads", "d_head", "d_model"],
            ln2_scale: Tensor["layers", "d_model"],
            ln2_bias: Tensor["layers", "d_model"],
            w1: Tensor["layers", "d_model", "d_ff"],
            b1: Tensor["layers", "d_ff"],
            w2: Tensor["layers", "d_ff", "d_model"],
            b2: Tensor["layers", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    """Stacked GPT-2 blocks run by ``jax.lax.scan`` (as examples/gpt2.py runs its layers) under FSDP
    over 'data' (the batch, and every weight's d_model: gathered one layer at a time right before
    its use) x TP over 'model' (heads and d_ff split), issue #15's ``fsdp_tp`` case."""
    layers = (ln1_scale, ln1_bias, wq, wk, wv, wo, ln2_scale, ln2_bias, w1, b1, w2, b2)
    x, _ = jax.lax.scan(lambda h, layer: (_gpt2_block(h, layer), None), x, layers)
    return x


@mesh(data=4, model=2, rules={"batch": "data", "d_model": "data", "heads": "model", "d_ff": "model"},
      regather=False)
def fsdp_tp_keep(x: Tensor["batch", "length", "d_model"],
                 ln1_scale: Tensor["layers", "d_model"],
                 ln1_bias: Tensor["layers", "d_model"],
                 wq: Tensor["layers", "d_model", "heads", "d_head"],
                 wk: Tensor["layers", "d_model", "heads", "d_head"],
                 wv: Tensor["layers", "d_model", "heads", "d_head"],
                 wo: Tensor["layers", "heads", "d_head", "d_model"],
                 ln2_scale: Tensor["layers", "d_model"],
                 ln2_bias: Tensor["layers", "d_model"],
                 w1: Tensor["layers", "d_model", "d_ff"],
                 b1: Tensor["layers", "d_ff"],
                 w2: Tensor["layers", "d_ff", "d_model"],
                 b2: Tensor["layers", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    """``fsdp_tp`` keeping the gathered weights for the backward pass (``regather=False``), for
    benchmarks/fsdp_memory.py."""
    layers = (ln1_scale, ln1_bias, wq, wk, wv, wo, ln2_scale, ln2_bias, w1, b1, w2, b2)
    x, _ = jax.lax.scan(lambda h, layer: (_gpt2_block(h, layer), None), x, layers)
    return x


def _layer_norm(x, scale, bias):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + 1e-5) * scale + bias


def _gpt2_block(x, layer):
    """One GPT-2 block: layer norm, causal attention, layer norm, GELU feed-forward with biases."""
    ln1_scale, ln1_bias, wq, wk, wv, wo, ln2_scale, ln2_bias, w1, b1, w2, b2 = layer
    length = x.shape[1]
    causal = jnp.tril(jnp.ones((length, length), dtype=bool))
    h = _layer_norm(x, ln1_scale, ln1_bias)
    q = jnp.einsum("bld,dhk->blhk", h, wq)
    k = jnp.einsum("bld,dhk->blhk", h, wk)
    v = jnp.einsum("bld,dhk->blhk", h, wv)
    scores = jnp.einsum("bqhk,bshk->bhqs", q, k) / jnp.sqrt(q.shape[-1])
    probs = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
    x = x + jnp.einsum("bhqs,bshk,hkd->bqd", probs, v, wo)
    h = _layer_norm(x, ln2_scale, ln2_bias)
    return x + jnp.einsum("blf,fd->bld", jax.nn.gelu(jnp.einsum("bld,df->blf", h, w1) + b1), w2) + b2


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
