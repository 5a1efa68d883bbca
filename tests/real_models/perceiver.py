"""Perceiver on a 2x4 mesh: perceiver_plain.py with dims hints and one @mesh line, nothing else."""

from __future__ import annotations

from typing import Annotated, NamedTuple, TypedDict

import jax
import jax.numpy as jnp

from meshify import mesh


class Config(NamedTuple):
    num_bands: int = 4
    max_freq: float = 10.0
    cross_heads: int = 1
    latent_heads: int = 8
    num_repeats: int = 2
    eps: float = 1e-5


DEFAULT_CONFIG = Config()


class LayerNorm(TypedDict):
    scale: Annotated[jax.Array, "d_model"]
    bias: Annotated[jax.Array, "d_model"]


class Attention(TypedDict):
    to_q: Annotated[jax.Array, "d_model", "attn_features"]
    to_kv: Annotated[jax.Array, "d_context", "kv_features"]
    to_out: Annotated[jax.Array, "attn_features", "d_model"]
    out_bias: Annotated[jax.Array, "d_model"]


class FeedForward(TypedDict):
    w1: Annotated[jax.Array, "d_model", "mlp"]
    b1: Annotated[jax.Array, "mlp"]
    w2: Annotated[jax.Array, "mlp", "d_model"]
    b2: Annotated[jax.Array, "d_model"]


class CrossBlock(TypedDict):
    norm_latents: LayerNorm
    norm_context: Annotated[LayerNorm, {"d_model": "d_context"}]
    attn: Annotated[Attention, {"attn_features": "cross_features", "kv_features": "cross_kv"}]
    norm_ff: LayerNorm
    ff: FeedForward


class LatentBlock(TypedDict):
    norm: LayerNorm
    attn: Annotated[Attention, {"d_context": "d_model"}]
    norm_ff: LayerNorm
    ff: FeedForward


class Perceiver(TypedDict):
    input_proj: Annotated[jax.Array, "in_features", "d_context"]
    latents: Annotated[jax.Array, "latents", "d_model"]
    cross: CrossBlock
    blocks: list[LatentBlock]
    norm_out: LayerNorm
    to_logits: Annotated[jax.Array, "d_model", "classes"]


def layer_norm(x, p, eps=1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * p["scale"] + p["bias"]


def feed_forward(x, p):
    return jax.nn.gelu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]


def attention(x, context, p, heads):
    b, n, _ = x.shape
    m = context.shape[1]
    q = x @ p["to_q"]
    k, v = jnp.split(context @ p["to_kv"], 2, axis=-1)
    q, k, v = (t.reshape(b, -1, heads, t.shape[-1] // heads).transpose(0, 2, 1, 3) for t in (q, k, v))
    sim = jnp.einsum("bhid,bhjd->bhij", q, k) * q.shape[-1] ** -0.5
    attn = jax.nn.softmax(sim, axis=-1)
    out = jnp.einsum("bhij,bhjd->bhid", attn, v).transpose(0, 2, 1, 3).reshape(b, n, -1)
    assert k.shape[2] == m
    return out @ p["to_out"] + p["out_bias"]


def fourier_encode(n, num_bands, max_freq):
    pos = jnp.linspace(-1.0, 1.0, n)[:, None]
    bands = jnp.linspace(1.0, max_freq / 2, num_bands)
    angles = pos * bands * jnp.pi
    return jnp.concatenate([pos, jnp.sin(angles), jnp.cos(angles)], axis=-1)


def cross_block(latents, context, p, cfg):
    x = latents + attention(layer_norm(latents, p["norm_latents"], cfg.eps),
                            layer_norm(context, p["norm_context"], cfg.eps), p["attn"], cfg.cross_heads)
    return x + feed_forward(layer_norm(x, p["norm_ff"], cfg.eps), p["ff"])


def latent_block(x, p, cfg):
    h = layer_norm(x, p["norm"], cfg.eps)
    x = x + attention(h, h, p["attn"], cfg.latent_heads)
    return x + feed_forward(layer_norm(x, p["norm_ff"], cfg.eps), p["ff"])


@mesh(batch=2, model=4, rules={"inputs": "model", "attn_features": "model", "kv_features": "model", "mlp": "model"})
def perceiver(params: Perceiver, data: Annotated[jax.Array, "batch", "inputs", "features"], cfg: Config = DEFAULT_CONFIG) -> Annotated[jax.Array, "batch", "classes"]:
    """Class logits of a batch of long inputs [batch, inputs, features]."""
    b, n, _ = data.shape
    enc = fourier_encode(n, cfg.num_bands, cfg.max_freq)
    data = jnp.concatenate([data, jnp.broadcast_to(enc, (b, *enc.shape))], axis=-1)
    context = data @ params["input_proj"]
    x = jnp.tile(params["latents"][None], (b, 1, 1))
    for _ in range(cfg.num_repeats):  # the cross-attention and latent blocks share their weights across repeats
        x = cross_block(x, context, params["cross"], cfg)
        for block in params["blocks"]:
            x = latent_block(x, block, cfg)
    x = layer_norm(x.mean(axis=1), params["norm_out"], cfg.eps)
    return x @ params["to_logits"]
