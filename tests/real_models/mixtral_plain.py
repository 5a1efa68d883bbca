"""Mixtral-style mixture of experts, single device: top-2 routing, rotary embeddings computed in place, a list of layers."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class Config(NamedTuple):
    heads: int = 8
    top_k: int = 2
    eps: float = 1e-5


CONFIG = Config()


class Layer(NamedTuple):
    attn_norm: jax.Array
    wq: jax.Array
    wk: jax.Array
    wv: jax.Array
    wo: jax.Array
    moe_norm: jax.Array
    router: jax.Array
    w_in: jax.Array
    w_out: jax.Array


class Model(NamedTuple):
    embed: jax.Array
    layers: list[Layer]
    norm: jax.Array
    head: jax.Array


def rms_norm(x, w, eps):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope(x, theta=10000.0):
    _, L, _, D = x.shape
    freqs = 1.0 / (theta ** (jnp.arange(0, D, 2, dtype=jnp.float32) / D))
    angles = jnp.outer(jnp.arange(L, dtype=jnp.float32), freqs)
    cos, sin = jnp.cos(angles)[None, :, None, :], jnp.sin(angles)[None, :, None, :]
    x1, x2 = x[..., : D // 2], x[..., D // 2:]
    return jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


def attention(x, p, cfg):
    B, L, _ = x.shape
    q = rope((x @ p.wq).reshape(B, L, cfg.heads, -1))
    k = rope((x @ p.wk).reshape(B, L, cfg.heads, -1))
    v = (x @ p.wv).reshape(B, L, cfg.heads, -1)
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(q.shape[-1])
    causal = jnp.tril(jnp.ones((L, L), dtype=bool))
    probs = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
    return jnp.einsum("bhqk,bkhd->bqhd", probs, v).reshape(B, L, -1) @ p.wo


def moe(x, p, cfg):
    probs = jax.nn.softmax(x @ p.router, axis=-1)
    weights, chosen = jax.lax.top_k(probs, cfg.top_k)
    weights = weights / jnp.sum(weights, axis=-1, keepdims=True)
    gates = jnp.einsum("blk,blke->ble", weights, jax.nn.one_hot(chosen, probs.shape[-1]))
    hidden = jax.nn.silu(jnp.einsum("bld,edf->blef", x, p.w_in))
    return jnp.einsum("blef,efd,ble->bld", hidden, p.w_out, gates)


def mixtral(model: Model, tokens: jax.Array, cfg: Config = CONFIG) -> jax.Array:
    """Next-token logits; every expert runs on every token, weighted by its gate (dense dispatch)."""
    x = model.embed[tokens]
    for layer in model.layers:
        x = x + attention(rms_norm(x, layer.attn_norm, cfg.eps), layer, cfg)
        x = x + moe(rms_norm(x, layer.moe_norm, cfg.eps), layer, cfg)
    return rms_norm(x, model.norm, cfg.eps) @ model.head
