"""Llama, single device: RMSNorm, SwiGLU, rotary embeddings, grouped-query attention (``jnp.repeat``)."""

from __future__ import annotations

from typing import NamedTuple, TypedDict

import jax
import jax.numpy as jnp


class Config(NamedTuple):
    heads: int = 16
    kv_heads: int = 8
    head_dim: int = 4
    rope_theta: float = 10000.0
    norm_eps: float = 1e-6


DEFAULT_CONFIG = Config()


class Layers(TypedDict):
    attention_norm: jax.Array
    wq: jax.Array
    wk: jax.Array
    wv: jax.Array
    wo: jax.Array
    ffn_norm: jax.Array
    w1: jax.Array
    w2: jax.Array
    w3: jax.Array


class Params(TypedDict):
    tok_embeddings: jax.Array
    layers: Layers
    norm: jax.Array
    output: jax.Array


def rms_norm(x, weight, eps):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def rope_tables(length, head_dim, theta):
    inv_freq = 1.0 / (theta ** (jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim))
    angles = jnp.outer(jnp.arange(length, dtype=jnp.float32), inv_freq)
    return jnp.cos(angles), jnp.sin(angles)


def apply_rope(x, cos, sin):
    x1, x2 = x[..., ::2], x[..., 1::2]
    c, s = cos[:, None, :], sin[:, None, :]
    return jnp.stack([x1 * c - x2 * s, x1 * s + x2 * c], axis=-1).reshape(x.shape)


def attention(x, p, cos, sin, cfg):
    B, L, _ = x.shape
    q = apply_rope((x @ p["wq"]).reshape(B, L, cfg.heads, cfg.head_dim), cos, sin)
    k = apply_rope((x @ p["wk"]).reshape(B, L, cfg.kv_heads, cfg.head_dim), cos, sin)
    v = (x @ p["wv"]).reshape(B, L, cfg.kv_heads, cfg.head_dim)
    k = jnp.repeat(k, cfg.heads // cfg.kv_heads, axis=2)
    v = jnp.repeat(v, cfg.heads // cfg.kv_heads, axis=2)
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(cfg.head_dim)
    mask = jnp.tril(jnp.ones((L, L), dtype=bool))
    probs = jax.nn.softmax(jnp.where(mask, scores, -jnp.inf), axis=-1)
    out = jnp.einsum("bhqk,bkhd->bqhd", probs, v).reshape(B, L, -1)
    return out @ p["wo"]


def feed_forward(x, p):
    return (jax.nn.silu(x @ p["w1"]) * (x @ p["w3"])) @ p["w2"]


def llama(params: Params, tokens: jax.Array, cfg: Config = DEFAULT_CONFIG) -> jax.Array:
    """Next-token logits of ``tokens`` (layers stacked, run by ``jax.lax.scan``)."""
    h = params["tok_embeddings"][tokens]
    cos, sin = rope_tables(tokens.shape[1], cfg.head_dim, cfg.rope_theta)

    def layer(h, p):
        h = h + attention(rms_norm(h, p["attention_norm"], cfg.norm_eps), p, cos, sin, cfg)
        h = h + feed_forward(rms_norm(h, p["ffn_norm"], cfg.norm_eps), p)
        return h, None

    h, _ = jax.lax.scan(layer, h, params["layers"])
    return rms_norm(h, params["norm"], cfg.norm_eps) @ params["output"]
