"""Mixtral on a 2x4 mesh: mixtral_plain.py with dims hints and one @mesh line, nothing else."""

from __future__ import annotations

from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp

from meshify import mesh


class Config(NamedTuple):
    heads: int = 8
    top_k: int = 2
    eps: float = 1e-5


CONFIG = Config()


class Layer(NamedTuple):
    attn_norm: Annotated[jax.Array, "d_model"]
    wq: Annotated[jax.Array, "d_model", "q_features"]
    wk: Annotated[jax.Array, "d_model", "q_features"]
    wv: Annotated[jax.Array, "d_model", "q_features"]
    wo: Annotated[jax.Array, "q_features", "d_model"]
    moe_norm: Annotated[jax.Array, "d_model"]
    router: Annotated[jax.Array, "d_model", "experts"]
    w_in: Annotated[jax.Array, "experts", "d_model", "d_ff"]
    w_out: Annotated[jax.Array, "experts", "d_ff", "d_model"]


class Model(NamedTuple):
    embed: Annotated[jax.Array, "vocab", "d_model"]
    layers: list[Layer]
    norm: Annotated[jax.Array, "d_model"]
    head: Annotated[jax.Array, "d_model", "vocab"]


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


@mesh(batch=2, model=4, rules={"q_features": "model", "experts": "model", "vocab": "model"})
def mixtral(model: Model, tokens: Annotated[jax.Array, "batch", "length"], cfg: Config = CONFIG) -> Annotated[jax.Array, "batch", "length", "vocab"]:
    """Next-token logits; every expert runs on every token, weighted by its gate (dense dispatch)."""
    x = model.embed[tokens]
    for layer in model.layers:
        x = x + attention(rms_norm(x, layer.attn_norm, cfg.eps), layer, cfg)
        x = x + moe(rms_norm(x, layer.moe_norm, cfg.eps), layer, cfg)
    return rms_norm(x, model.norm, cfg.eps) @ model.head
