"""nanoGPT on a 2x4 mesh: nanogpt_plain.py with dims hints and one @mesh line, nothing else."""

from __future__ import annotations

import math
from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp

from meshify import mesh


class GPTConfig(NamedTuple):
    n_head: int = 8
    eps: float = 1e-5


DEFAULT_CONFIG = GPTConfig()


class LayerNorm(NamedTuple):
    weight: Annotated[jax.Array, "d_model"]
    bias: Annotated[jax.Array, "d_model"]


class Block(NamedTuple):
    ln_1: LayerNorm
    c_attn_w: Annotated[jax.Array, "d_model", "qkv_features"]
    c_attn_b: Annotated[jax.Array, "qkv_features"]
    c_proj_w: Annotated[jax.Array, "attn_features", "d_model"]
    c_proj_b: Annotated[jax.Array, "d_model"]
    ln_2: LayerNorm
    c_fc_w: Annotated[jax.Array, "d_model", "d_ff"]
    c_fc_b: Annotated[jax.Array, "d_ff"]
    mlp_proj_w: Annotated[jax.Array, "d_ff", "d_model"]
    mlp_proj_b: Annotated[jax.Array, "d_model"]


class GPT(NamedTuple):
    wte: Annotated[jax.Array, "vocab", "d_model"]
    wpe: Annotated[jax.Array, "positions", "d_model"]
    h: list[Block]
    ln_f: LayerNorm


def layer_norm(x, ln: LayerNorm, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * ln.weight + ln.bias


def causal_self_attention(x, block: Block, config: GPTConfig):
    B, T, C = x.shape
    qkv = x @ block.c_attn_w + block.c_attn_b
    q, k, v = jnp.split(qkv, 3, axis=2)
    q = q.reshape(B, T, config.n_head, C // config.n_head).transpose(0, 2, 1, 3)
    k = k.reshape(B, T, config.n_head, C // config.n_head).transpose(0, 2, 1, 3)
    v = v.reshape(B, T, config.n_head, C // config.n_head).transpose(0, 2, 1, 3)
    att = (q @ k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(k.shape[-1]))
    mask = jnp.tril(jnp.ones((T, T), dtype=bool))
    att = jnp.where(mask, att, -jnp.inf)
    att = jax.nn.softmax(att, axis=-1)
    y = att @ v
    y = y.transpose(0, 2, 1, 3).reshape(B, T, C)
    return y @ block.c_proj_w + block.c_proj_b


def mlp(x, block: Block):
    h = jax.nn.gelu(x @ block.c_fc_w + block.c_fc_b, approximate=True)
    return h @ block.mlp_proj_w + block.mlp_proj_b


@mesh(batch=2, model=4, rules={"qkv_features": "model", "attn_features": "model", "d_ff": "model"})
def nanogpt(params: GPT, idx: Annotated[jax.Array, "batch", "length"], config: GPTConfig = DEFAULT_CONFIG):
    _, T = idx.shape
    pos = jnp.arange(0, T)
    x = params.wte[idx] + params.wpe[pos]
    for block in params.h:
        x = x + causal_self_attention(layer_norm(x, block.ln_1, config.eps), block, config)
        x = x + mlp(layer_norm(x, block.ln_2, config.eps), block)
    x = layer_norm(x, params.ln_f, config.eps)
    return x @ params.wte.T
