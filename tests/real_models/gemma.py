"""Gemma on a 2x4 mesh: gemma_plain.py with dims hints and one @mesh line, nothing else."""

from __future__ import annotations

import math
from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp

from meshify import mesh


class GemmaConfig(NamedTuple):
    num_heads: int = 8
    head_dim: int = 4
    rope_base: int = 10_000
    attn_logits_soft_cap: float = 50.0
    final_logit_soft_cap: float = 30.0
    norm_eps: float = 1e-6


CONFIG = GemmaConfig()
K_MASK = -2.3819763e38


class Layer(NamedTuple):
    pre_attention_norm: Annotated[jax.Array, "layers", "d_model"]
    q: Annotated[jax.Array, "layers", "heads", "d_model", "head_dim"]
    kv: Annotated[jax.Array, "layers", "kv", "d_model", "head_dim"]
    attn_vec: Annotated[jax.Array, "layers", "heads", "head_dim", "d_model"]
    pre_ffw_norm: Annotated[jax.Array, "layers", "d_model"]
    gating: Annotated[jax.Array, "layers", "gates", "d_model", "hidden"]
    linear: Annotated[jax.Array, "layers", "hidden", "d_model"]


class Params(NamedTuple):
    embedding: Annotated[jax.Array, "vocab", "d_model"]
    layers: Layer
    final_norm: Annotated[jax.Array, "d_model"]


def rms_norm(x, scale, eps):
    var = jnp.mean(jnp.square(x), axis=-1, keepdims=True)
    normed = x * jax.lax.rsqrt(var + eps)
    return normed * (1 + scale)


def apply_rope(inputs, positions, base):
    """Rotary embedding of ``inputs`` [batch, length, (heads,) head_dim] at ``positions`` [batch, length]."""
    head_dim = inputs.shape[-1]
    timescale = base ** (jnp.arange(head_dim // 2) * 2 / head_dim)
    sinusoid = positions[..., jnp.newaxis] / timescale[jnp.newaxis, jnp.newaxis, :]
    if inputs.ndim == 4:
        sinusoid = sinusoid[..., jnp.newaxis, :]
    sin, cos = jnp.sin(sinusoid), jnp.cos(sinusoid)
    first_half, second_half = jnp.split(inputs, 2, axis=-1)
    return jnp.concatenate([first_half * cos - second_half * sin, second_half * cos + first_half * sin], axis=-1)


def soft_cap(x, cap):
    return jnp.tanh(x / cap) * cap


def attention(x, positions, layer: Layer, cfg: GemmaConfig):
    query = jnp.einsum("btd,ndh->btnh", x, layer.q)
    key, value = jnp.einsum("btd,cdh->cbth", x, layer.kv)
    query = apply_rope(query, positions, cfg.rope_base) * cfg.head_dim ** -0.5
    key = apply_rope(key, positions, cfg.rope_base)
    logits = soft_cap(jnp.einsum("btnh,bsh->btns", query, key), cfg.attn_logits_soft_cap)
    seq_len = x.shape[1]
    causal = jnp.tril(jnp.ones((seq_len, seq_len), dtype=bool))
    logits = jnp.where(causal[None, :, None, :], logits, K_MASK)
    probs = jax.nn.softmax(logits, axis=-1)
    encoded = jnp.einsum("btns,bsh->btnh", probs, value)
    return jnp.einsum("btnh,nhd->btd", encoded, layer.attn_vec)


def feed_forward(x, layer: Layer):
    gate, up = jnp.einsum("btd,cdf->cbtf", x, layer.gating)
    return (jax.nn.gelu(gate) * up) @ layer.linear


@mesh(batch=2, model=4, rules={"heads": "model", "hidden": "model", "vocab": "model"})
def gemma(params: Params, tokens: Annotated[jax.Array, "batch", "length"], cfg: GemmaConfig = CONFIG) -> Annotated[jax.Array, "batch", "length", "vocab"]:
    """Next-token logits of ``tokens``, soft-capped; the head is the tied embedding."""
    x = params.embedding[(tokens,)]
    x = x * math.sqrt(x.shape[-1])
    positions = jnp.arange(tokens.shape[1])[jnp.newaxis, :]

    def block(h, layer):
        h = h + attention(rms_norm(h, layer.pre_attention_norm, cfg.norm_eps), positions, layer, cfg)
        h = h + feed_forward(rms_norm(h, layer.pre_ffw_norm, cfg.norm_eps), layer)
        return h, None

    x, _ = jax.lax.scan(block, x, params.layers)
    x = rms_norm(x, params.final_norm, cfg.norm_eps)
    logits = x @ params.embedding.T
    return soft_cap(logits, cfg.final_logit_soft_cap)
