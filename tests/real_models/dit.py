"""DiT on a 2x4 mesh: dit_plain.py with dims hints and one @mesh line, nothing else."""

from __future__ import annotations

import math
from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp

from meshify import mesh


class Config(NamedTuple):
    patch_size: int = 2
    num_heads: int = 8
    frequency_embedding_size: int = 16
    num_classes: int = 10
    class_dropout_prob: float = 0.1
    drop_path: float = 0.1
    num_timesteps: int = 1000  # the linear beta schedule's length


DEFAULT_CONFIG = Config()


class DiTBlock(NamedTuple):
    adaLN_w: Annotated[jax.Array, "d_model", "modulation"]
    adaLN_b: Annotated[jax.Array, "modulation"]
    qkv_w: Annotated[jax.Array, "d_model", "qkv_features"]
    qkv_b: Annotated[jax.Array, "qkv_features"]
    proj_w: Annotated[jax.Array, "attn_features", "d_model"]
    proj_b: Annotated[jax.Array, "d_model"]
    fc1_w: Annotated[jax.Array, "d_model", "mlp"]
    fc1_b: Annotated[jax.Array, "mlp"]
    fc2_w: Annotated[jax.Array, "mlp", "d_model"]
    fc2_b: Annotated[jax.Array, "d_model"]


class FinalLayer(NamedTuple):
    adaLN_w: Annotated[jax.Array, "d_model", "final_modulation"]
    adaLN_b: Annotated[jax.Array, "final_modulation"]
    linear_w: Annotated[jax.Array, "d_model", "out_features"]
    linear_b: Annotated[jax.Array, "out_features"]


class DiT(NamedTuple):
    x_embedder_w: Annotated[jax.Array, "patch_features", "d_model"]
    x_embedder_b: Annotated[jax.Array, "d_model"]
    pos_embed: Annotated[jax.Array, "1", "tokens", "d_model"]
    t_mlp1_w: Annotated[jax.Array, "frequencies", "d_model"]
    t_mlp1_b: Annotated[jax.Array, "d_model"]
    t_mlp2_w: Annotated[jax.Array, "d_model", "d_model"]
    t_mlp2_b: Annotated[jax.Array, "d_model"]
    y_embedding_table: Annotated[jax.Array, "classes", "d_model"]
    blocks: tuple[DiTBlock, ...]
    final_layer: FinalLayer


def layer_norm(x, eps=1e-6):  # nn.LayerNorm(elementwise_affine=False)
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps)


def modulate(x, shift, scale):
    return x * (1 + scale[:, None, :]) + shift[:, None, :]


def drop_path(x, key, drop_prob: float = 0.0, training: bool = False, scale_by_keep: bool = True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = jax.random.bernoulli(key, keep_prob, shape).astype(x.dtype)
    if keep_prob > 0.0 and scale_by_keep:
        random_tensor = random_tensor / keep_prob
    return x * random_tensor


def timestep_embedding(t, dim, max_period=10000):
    half = dim // 2
    freqs = jnp.exp(-math.log(max_period) * jnp.arange(start=0, stop=half, dtype=jnp.float32) / half)
    args = t[:, None].astype(jnp.float32) * freqs[None]
    return jnp.concatenate([jnp.cos(args), jnp.sin(args)], axis=-1)


def token_drop(labels, key, dropout_prob, num_classes):
    drop_ids = jax.random.uniform(key, (labels.shape[0],)) < dropout_prob
    return jnp.where(drop_ids, num_classes, labels)


def attention(x, p: DiTBlock, num_heads):
    B, N, C = x.shape
    qkv = (x @ p.qkv_w + p.qkv_b).reshape(B, N, 3, num_heads, C // num_heads).transpose(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    q = q * (C // num_heads) ** -0.5
    attn = jax.nn.softmax(q @ k.swapaxes(-2, -1), axis=-1)
    x = (attn @ v).transpose(0, 2, 1, 3).reshape(B, N, C)
    return x @ p.proj_w + p.proj_b


def dit_block(x, c, p: DiTBlock, key, cfg: Config):
    shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = jnp.split(
        jax.nn.silu(c) @ p.adaLN_w + p.adaLN_b, 6, axis=1)
    key_attn, key_mlp = jax.random.split(key)
    h = attention(modulate(layer_norm(x), shift_msa, scale_msa), p, cfg.num_heads)
    x = x + drop_path(gate_msa[:, None, :] * h, key_attn, cfg.drop_path, True)
    h = jax.nn.gelu(modulate(layer_norm(x), shift_mlp, scale_mlp) @ p.fc1_w + p.fc1_b, approximate=True)
    h = h @ p.fc2_w + p.fc2_b
    return x + drop_path(gate_mlp[:, None, :] * h, key_mlp, cfg.drop_path, True)


def patchify(x, p):
    B, H, W, C = x.shape
    x = x.reshape(B, H // p, p, W // p, p, C)
    x = jnp.einsum("nhpwqc->nhwpqc", x)
    return x.reshape(B, (H // p) * (W // p), p * p * C)


def unpatchify(x, p, c):
    h = w = int(x.shape[1] ** 0.5)
    x = x.reshape(x.shape[0], h, w, p, p, c)
    x = jnp.einsum("nhwpqc->nhpwqc", x)
    return x.reshape(x.shape[0], h * p, w * p, c)


@mesh(batch=2, model=4, rules={"qkv_features": "model", "attn_features": "model", "mlp": "model"})
def dit(params: DiT, x_start: Annotated[jax.Array, "batch", "height", "width", "channels"], t: Annotated[jax.Array, "batch"], y: Annotated[jax.Array, "batch"], noise: Annotated[jax.Array, "batch", "height", "width", "channels"], key: Annotated[jax.Array, ()],
        cfg: Config = DEFAULT_CONFIG) -> tuple[Annotated[jax.Array, ()], Annotated[jax.Array, "batch", "height", "width", "out_channels"]]:
    """Diffusion loss (epsilon MSE, learned sigma left out) and the model output at ``q_sample(x_start, t)``."""
    betas = jnp.linspace(0.0001, 0.02, cfg.num_timesteps, dtype=jnp.float32)
    alphas_cumprod = jnp.cumprod(1.0 - betas, axis=0)
    a = alphas_cumprod[t][:, None, None, None]
    x_t = jnp.sqrt(a) * x_start + jnp.sqrt(1.0 - a) * noise
    in_channels = x_t.shape[-1]

    key_y, key_blocks = jax.random.split(key)
    x = patchify(x_t, cfg.patch_size) @ params.x_embedder_w + params.x_embedder_b + params.pos_embed
    t_freq = timestep_embedding(t, cfg.frequency_embedding_size)
    t_emb = jax.nn.silu(t_freq @ params.t_mlp1_w + params.t_mlp1_b) @ params.t_mlp2_w + params.t_mlp2_b
    y = token_drop(y, key_y, cfg.class_dropout_prob, cfg.num_classes)
    c = t_emb + params.y_embedding_table[y]
    for block, block_key in zip(params.blocks, jax.random.split(key_blocks, len(params.blocks))):
        x = dit_block(x, c, block, block_key, cfg)

    final = params.final_layer
    shift, scale = jnp.split(jax.nn.silu(c) @ final.adaLN_w + final.adaLN_b, 2, axis=1)
    x = modulate(layer_norm(x), shift, scale) @ final.linear_w + final.linear_b
    model_output = unpatchify(x, cfg.patch_size, 2 * in_channels)
    eps, _ = jnp.split(model_output, 2, axis=-1)
    return jnp.mean((noise - eps) ** 2), model_output
