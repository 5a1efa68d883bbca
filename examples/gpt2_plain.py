"""The single-device GPT-2 that examples/gpt2.py shards: the same code, without hints.

    diff examples/gpt2_plain.py examples/gpt2.py     # the whole change: dims hints and one @mesh

This file is the "before" picture; it runs on one device as plain JAX.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class Config(NamedTuple):
    heads: int = 8
    dropout: float = 0.1


DEFAULT_CONFIG = Config()


class LayerNorm(NamedTuple):
    scale: jax.Array
    bias: jax.Array


class Attention(NamedTuple):
    wqkv: jax.Array
    wo: jax.Array


class Mlp(NamedTuple):
    w_in: jax.Array
    b_in: jax.Array
    w_out: jax.Array
    b_out: jax.Array


class Block(NamedTuple):
    ln1: LayerNorm
    attn: Attention
    ln2: LayerNorm
    mlp: Mlp


class FinalNorm(NamedTuple):
    scale: jax.Array
    bias: jax.Array


class GPT2(NamedTuple):
    wte: jax.Array
    wpe: jax.Array
    blocks: Block
    ln_f: FinalNorm


def layer_norm(x, p):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + 1e-5) * p.scale + p.bias


def dropout(x, key, rate, train):
    if not train:
        return x
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


def attention(x, p, key, cfg, train):
    k_attn, k_out = jax.random.split(key)
    qkv = jnp.einsum("bld,dthk->tblhk", x, p.wqkv)
    q, k, v = qkv[0], qkv[1], qkv[2]
    length = x.shape[1]
    causal = jnp.tril(jnp.ones((length, length), dtype=bool))
    scores = jnp.einsum("bqhk,bshk->bhqs", q, k) / jnp.sqrt(q.shape[-1])
    probs = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
    probs = dropout(probs, k_attn, cfg.dropout, train)
    out = jnp.einsum("bhqs,bshk,hkd->bqd", probs, v, p.wo)
    return dropout(out, k_out, cfg.dropout, train)


def mlp(x, p, key, cfg, train):
    h = jax.nn.gelu(jnp.einsum("bld,df->blf", x, p.w_in) + p.b_in)
    return dropout(jnp.einsum("blf,fd->bld", h, p.w_out) + p.b_out, key, cfg.dropout, train)


def block(x, p, key, cfg, train):
    k1, k2 = jax.random.split(key)
    x = x + attention(layer_norm(x, p.ln1), p.attn, k1, cfg, train)
    return x + mlp(layer_norm(x, p.ln2), p.mlp, k2, cfg, train)


def gpt2(params: GPT2,
         tokens: jax.Array,
         targets: jax.Array,
         key: jax.Array,
         cfg: Config = DEFAULT_CONFIG,
         train: bool = False) -> tuple[jax.Array, jax.Array]:
    """Mean next-token cross-entropy and the logits (tied embedding head)."""
    x = params.wte[tokens] + params.wpe
    keys = jax.random.split(key, params.blocks.ln1.scale.shape[0])
    x, _ = jax.lax.scan(lambda h, layer: (block(h, layer[0], layer[1], cfg, train), None), x,
                        (params.blocks, keys))
    h = layer_norm(x, params.ln_f)
    logits = jnp.einsum("bld,vd->blv", h, params.wte)
    picked = jnp.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
    loss = jnp.mean(jax.nn.logsumexp(logits, axis=-1) - picked)
    return loss, logits
