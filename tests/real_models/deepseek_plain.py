"""DeepSeek-V2, single device: multi-head latent attention with a decoupled rotary key, shared + routed experts."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class Config(NamedTuple):
    n_heads: int = 8
    qk_nope_head_dim: int = 4
    qk_rope_head_dim: int = 2
    v_head_dim: int = 4
    kv_lora_rank: int = 16
    n_activated_experts: int = 2
    route_scale: float = 1.0
    aux_loss_alpha: float = 0.001
    rope_theta: float = 10000.0
    eps: float = 1e-6


DEFAULT_CONFIG = Config()


class MLA(NamedTuple):
    wq: jax.Array
    wkv_a: jax.Array
    kv_norm: jax.Array
    wkv_b: jax.Array
    wo: jax.Array


class MoE(NamedTuple):
    gate: jax.Array
    w1: jax.Array
    w2: jax.Array
    w3: jax.Array
    shared_w1: jax.Array
    shared_w2: jax.Array
    shared_w3: jax.Array


class Block(NamedTuple):
    attn_norm: jax.Array
    attn: MLA
    ffn_norm: jax.Array
    ffn: MoE


class Transformer(NamedTuple):
    embed: jax.Array
    layers: list[Block]
    norm: jax.Array
    head: jax.Array


def rms_norm(x, weight, eps):
    return x * jax.lax.rsqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + eps) * weight


def precompute_freqs(dim, seqlen, theta):
    freqs = 1.0 / (theta ** (jnp.arange(0, dim, 2, dtype=jnp.float32) / dim))
    angles = jnp.outer(jnp.arange(seqlen, dtype=jnp.float32), freqs)
    return jnp.cos(angles), jnp.sin(angles)


def apply_rotary_emb(x, cos, sin):
    x1, x2 = x[..., 0::2], x[..., 1::2]
    cos, sin = cos[None, :, None, :], sin[None, :, None, :]
    out = jnp.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)
    return out.reshape(x.shape)


def mla(x, p: MLA, cos, sin, cfg: Config):
    bsz, seqlen, _ = x.shape
    qk_head_dim = cfg.qk_nope_head_dim + cfg.qk_rope_head_dim
    q = (x @ p.wq).reshape(bsz, seqlen, cfg.n_heads, qk_head_dim)
    q_nope, q_pe = jnp.split(q, [cfg.qk_nope_head_dim], axis=-1)
    q_pe = apply_rotary_emb(q_pe, cos, sin)
    kv = x @ p.wkv_a
    kv, k_pe = jnp.split(kv, [cfg.kv_lora_rank], axis=-1)
    k_pe = apply_rotary_emb(k_pe[:, :, None, :], cos, sin)
    kv = rms_norm(kv, p.kv_norm, cfg.eps) @ p.wkv_b
    kv = kv.reshape(bsz, seqlen, cfg.n_heads, cfg.qk_nope_head_dim + cfg.v_head_dim)
    k_nope, v = jnp.split(kv, [cfg.qk_nope_head_dim], axis=-1)
    q = jnp.concatenate([q_nope, q_pe], axis=-1)
    k = jnp.concatenate([k_nope, jnp.broadcast_to(k_pe, (bsz, seqlen, cfg.n_heads, cfg.qk_rope_head_dim))], axis=-1)
    scores = jnp.einsum("bshd,bthd->bsht", q, k) * qk_head_dim ** -0.5
    mask = jnp.triu(jnp.full((seqlen, seqlen), -jnp.inf), k=1)
    scores = jax.nn.softmax(scores + mask[None, :, None, :], axis=-1)
    out = jnp.einsum("bsht,bthd->bshd", scores, v)
    return out.reshape(bsz, seqlen, -1) @ p.wo


def expert_mlp(x, w1, w2, w3):
    return (jax.nn.silu(x @ w1) * (x @ w3)) @ w2


def moe(x, p: MoE, cfg: Config):
    n_experts = p.gate.shape[0]
    scores = jax.nn.softmax(x @ p.gate.T, axis=-1)
    weights, indices = jax.lax.top_k(scores, cfg.n_activated_experts)
    weights = weights * cfg.route_scale
    mask = jax.nn.one_hot(indices, n_experts)
    combine = jnp.einsum("bsk,bske->bse", weights, mask)
    h = jax.nn.silu(jnp.einsum("bsd,edf->bsef", x, p.w1)) * jnp.einsum("bsd,edf->bsef", x, p.w3)
    routed = jnp.einsum("bsef,efd,bse->bsd", h, p.w2, combine)
    shared = expert_mlp(x, p.shared_w1, p.shared_w2, p.shared_w3)
    # expert-level balance loss: fraction of tokens sent to each expert times its mean probability
    load = jnp.mean(jnp.sum(mask, axis=2), axis=(0, 1)) * n_experts / cfg.n_activated_experts
    importance = jnp.mean(scores, axis=(0, 1))
    aux_loss = jnp.sum(load * importance) * cfg.aux_loss_alpha
    return routed + shared, aux_loss


def deepseek(params: Transformer, tokens: jax.Array, cfg: Config = DEFAULT_CONFIG) -> tuple[jax.Array, jax.Array]:
    """Next-token logits and the summed expert balance loss."""
    seqlen = tokens.shape[1]
    cos, sin = precompute_freqs(cfg.qk_rope_head_dim, seqlen, cfg.rope_theta)
    h = params.embed[tokens]
    aux_loss = jnp.array(0.0)
    for layer in params.layers:
        h = h + mla(rms_norm(h, layer.attn_norm, cfg.eps), layer.attn, cos, sin, cfg)
        ffn_out, layer_aux = moe(rms_norm(h, layer.ffn_norm, cfg.eps), layer.ffn, cfg)
        h = h + ffn_out
        aux_loss = aux_loss + layer_aux
    logits = rms_norm(h, params.norm, cfg.eps) @ params.head
    return logits, aux_loss
