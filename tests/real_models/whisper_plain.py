"""Whisper-style audio encoder, single device: two 1-D convolutions over time, sliced positions, pre-LN blocks."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class Dims(NamedTuple):
    n_head: int = 8
    eps: float = 1e-5


DIMS = Dims()


class LayerNorm(NamedTuple):
    weight: jax.Array
    bias: jax.Array


class Block(NamedTuple):
    attn_ln: LayerNorm
    query_w: jax.Array
    query_b: jax.Array
    key_w: jax.Array
    value_w: jax.Array
    value_b: jax.Array
    out_w: jax.Array
    out_b: jax.Array
    mlp_ln: LayerNorm
    mlp_in_w: jax.Array
    mlp_in_b: jax.Array
    mlp_out_w: jax.Array
    mlp_out_b: jax.Array


class AudioEncoder(NamedTuple):
    conv1_w: jax.Array
    conv1_b: jax.Array
    conv2_w: jax.Array
    conv2_b: jax.Array
    positional_embedding: jax.Array
    blocks: list[Block]
    ln_post: LayerNorm


def layer_norm(x, ln: LayerNorm, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * ln.weight + ln.bias


def conv1d(x, w, b, stride):
    y = jax.lax.conv_general_dilated(x, w, window_strides=(stride,), padding=((1, 1),),
                                     dimension_numbers=("NWC", "WIO", "NWC"))
    return y + b


def multi_head_attention(x, block: Block, dims: Dims):
    B, T, _ = x.shape
    q = (x @ block.query_w + block.query_b).reshape(B, T, dims.n_head, -1)
    k = (x @ block.key_w).reshape(B, T, dims.n_head, -1)
    v = (x @ block.value_w + block.value_b).reshape(B, T, dims.n_head, -1)
    scale = q.shape[-1] ** -0.25
    qk = jnp.einsum("bthd,bshd->bhts", q * scale, k * scale)
    w = jax.nn.softmax(qk, axis=-1)
    out = jnp.einsum("bhts,bshd->bthd", w, v).reshape(B, T, -1)
    return out @ block.out_w + block.out_b


def residual_block(x, block: Block, dims: Dims):
    x = x + multi_head_attention(layer_norm(x, block.attn_ln, dims.eps), block, dims)
    h = jax.nn.gelu(layer_norm(x, block.mlp_ln, dims.eps) @ block.mlp_in_w + block.mlp_in_b, approximate=False)
    return x + h @ block.mlp_out_w + block.mlp_out_b


def whisper(params: AudioEncoder, mel: jax.Array, dims: Dims = DIMS) -> jax.Array:
    """Encoder states of log-mel features ``mel`` [batch, frames, mels], at half the frame rate."""
    x = jax.nn.gelu(conv1d(mel, params.conv1_w, params.conv1_b, 1), approximate=False)
    x = jax.nn.gelu(conv1d(x, params.conv2_w, params.conv2_b, 2), approximate=False)
    x = x + params.positional_embedding[: x.shape[1]]
    for block in params.blocks:
        x = residual_block(x, block, dims)
    return layer_norm(x, params.ln_post, dims.eps)
