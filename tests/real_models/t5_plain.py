"""T5, single device: an encoder-decoder with bucketed relative position biases, per-layer Python loops."""

from __future__ import annotations

import math
from typing import NamedTuple, TypedDict

import jax
import jax.numpy as jnp


class Config(NamedTuple):
    layers: int = 2
    buckets: int = 16
    max_distance: int = 32
    eps: float = 1e-6


DEFAULT_CONFIG = Config()


class Attention(TypedDict):
    q: jax.Array
    k: jax.Array
    v: jax.Array
    o: jax.Array


class EncoderLayers(TypedDict):
    attn_norm: jax.Array
    attn: Attention
    mlp_norm: jax.Array
    wi: jax.Array
    wo: jax.Array


class DecoderLayers(TypedDict):
    self_norm: jax.Array
    self_attn: Attention
    cross_norm: jax.Array
    cross_attn: Attention
    mlp_norm: jax.Array
    wi: jax.Array
    wo: jax.Array


class Params(TypedDict):
    embedding: jax.Array
    encoder_bias: jax.Array
    encoder: EncoderLayers
    encoder_norm: jax.Array
    decoder_bias: jax.Array
    decoder: DecoderLayers
    decoder_norm: jax.Array


def rms_norm(x, scale, eps):
    variance = jnp.mean(jnp.square(x), axis=-1, keepdims=True)
    return x * jax.lax.rsqrt(variance + eps) * scale


def relative_position_bucket(relative_position, bidirectional, num_buckets, max_distance):
    ret = 0
    n = -relative_position
    if bidirectional:
        num_buckets //= 2
        ret += (n < 0).astype(jnp.int32) * num_buckets
        n = jnp.abs(n)
    else:
        n = jnp.maximum(n, 0)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    val_if_large = max_exact + (
        jnp.log(n.astype(jnp.float32) / max_exact + jnp.finfo(jnp.float32).eps)
        / math.log(max_distance / max_exact) * (num_buckets - max_exact)).astype(jnp.int32)
    val_if_large = jnp.minimum(val_if_large, num_buckets - 1)
    return ret + jnp.where(is_small, n, val_if_large)


def position_bias(table, q_len, k_len, bidirectional, cfg):
    context = jnp.arange(q_len)[:, None]
    memory = jnp.arange(k_len)[None, :]
    buckets = relative_position_bucket(memory - context, bidirectional, cfg.buckets, cfg.max_distance)
    return jnp.transpose(table[buckets], (2, 0, 1))


def attention(x, kv, p, i, bias, mask):
    q = jnp.einsum("bqd,dhk->bqhk", x, p["q"][i])
    k = jnp.einsum("bsd,dhk->bshk", kv, p["k"][i])
    v = jnp.einsum("bsd,dhk->bshk", kv, p["v"][i])
    scores = jnp.einsum("bqhk,bshk->bhqs", q, k) + bias
    if mask is not None:
        scores = jnp.where(mask, scores, -1e10)
    out = jnp.einsum("bhqs,bshk->bqhk", jax.nn.softmax(scores, axis=-1), v)
    return jnp.einsum("bqhk,hkd->bqd", out, p["o"][i])


def dense_relu_dense(x, p, i):
    return jax.nn.relu(x @ p["wi"][i]) @ p["wo"][i]


def t5(params: Params, inputs: jax.Array, targets: jax.Array, cfg: Config = DEFAULT_CONFIG) -> jax.Array:
    """Decoder logits for ``targets`` given ``inputs`` (teacher forcing); the head is the tied embedding."""
    enc, dec = params["encoder"], params["decoder"]
    x = params["embedding"][inputs]
    bias = position_bias(params["encoder_bias"], inputs.shape[1], inputs.shape[1], True, cfg)
    for i in range(cfg.layers):
        h = rms_norm(x, enc["attn_norm"][i], cfg.eps)
        x = x + attention(h, h, enc["attn"], i, bias, None)
        x = x + dense_relu_dense(rms_norm(x, enc["mlp_norm"][i], cfg.eps), enc, i)
    memory = rms_norm(x, params["encoder_norm"], cfg.eps)

    y = params["embedding"][targets]
    length = targets.shape[1]
    bias = position_bias(params["decoder_bias"], length, length, False, cfg)
    causal = jnp.tril(jnp.ones((length, length), dtype=bool))
    for i in range(cfg.layers):
        h = rms_norm(y, dec["self_norm"][i], cfg.eps)
        y = y + attention(h, h, dec["self_attn"], i, bias, causal)
        y = y + attention(rms_norm(y, dec["cross_norm"][i], cfg.eps), memory, dec["cross_attn"], i, 0.0, None)
        y = y + dense_relu_dense(rms_norm(y, dec["mlp_norm"][i], cfg.eps), dec, i)
    y = rms_norm(y, params["decoder_norm"], cfg.eps)
    return (y * y.shape[-1] ** -0.5) @ params["embedding"].T
