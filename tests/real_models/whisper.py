"""Whisper on a 2x4 mesh: whisper_plain.py with dims hints and one @mesh line, nothing else."""

from __future__ import annotations

from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp

from meshify import mesh


class Dims(NamedTuple):
    n_head: int = 8
    eps: float = 1e-5


DIMS = Dims()


class LayerNorm(NamedTuple):
    weight: Annotated[jax.Array, "d_model"]
    bias: Annotated[jax.Array, "d_model"]


class Block(NamedTuple):
    attn_ln: LayerNorm
    query_w: Annotated[jax.Array, "d_model", "attn_features"]
    query_b: Annotated[jax.Array, "attn_features"]
    key_w: Annotated[jax.Array, "d_model", "attn_features"]
    value_w: Annotated[jax.Array, "d_model", "attn_features"]
    value_b: Annotated[jax.Array, "attn_features"]
    out_w: Annotated[jax.Array, "attn_features", "d_model"]
    out_b: Annotated[jax.Array, "d_model"]
    mlp_ln: LayerNorm
    mlp_in_w: Annotated[jax.Array, "d_model", "mlp"]
    mlp_in_b: Annotated[jax.Array, "mlp"]
    mlp_out_w: Annotated[jax.Array, "mlp", "d_model"]
    mlp_out_b: Annotated[jax.Array, "d_model"]


class AudioEncoder(NamedTuple):
    conv1_w: Annotated[jax.Array, "kernel", "mels", "conv_channels"]
    conv1_b: Annotated[jax.Array, "conv_channels"]
    conv2_w: Annotated[jax.Array, "kernel", "conv_channels", "d_model"]
    conv2_b: Annotated[jax.Array, "d_model"]
    positional_embedding: Annotated[jax.Array, "positions", "d_model"]
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


@mesh(batch=2, model=4, rules={"attn_features": "model", "mlp": "model"})
def whisper(params: AudioEncoder, mel: Annotated[jax.Array, "batch", "frames", "mels"], dims: Dims = DIMS) -> Annotated[jax.Array, "batch", "frames", "d_model"]:
    """Encoder states of log-mel features ``mel`` [batch, frames, mels], at half the frame rate."""
    x = jax.nn.gelu(conv1d(mel, params.conv1_w, params.conv1_b, 1), approximate=False)
    x = jax.nn.gelu(conv1d(x, params.conv2_w, params.conv2_b, 2), approximate=False)
    x = x + params.positional_embedding[: x.shape[1]]
    for block in params.blocks:
        x = residual_block(x, block, dims)
    return layer_norm(x, params.ln_post, dims.eps)
