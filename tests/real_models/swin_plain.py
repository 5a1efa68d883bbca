"""Swin Transformer, single device: shifted windows with a relative position bias and an attention mask, patch merging."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np


class Config(NamedTuple):
    patch: int = 2
    window: int = 4
    heads: int = 8
    eps: float = 1e-5


DEFAULT_CONFIG = Config()


class Block(NamedTuple):
    norm1_w: jax.Array
    norm1_b: jax.Array
    qkv_w: jax.Array
    qkv_b: jax.Array
    rel_bias: jax.Array
    proj_w: jax.Array
    proj_b: jax.Array
    norm2_w: jax.Array
    norm2_b: jax.Array
    fc1_w: jax.Array
    fc1_b: jax.Array
    fc2_w: jax.Array
    fc2_b: jax.Array


class PatchMerging(NamedTuple):
    norm_w: jax.Array
    norm_b: jax.Array
    reduction: jax.Array


class Swin(NamedTuple):
    patch_w: jax.Array
    patch_b: jax.Array
    stage1: list[Block]
    merge: PatchMerging
    stage2: list[Block]
    norm_w: jax.Array
    norm_b: jax.Array
    head_w: jax.Array
    head_b: jax.Array


def relative_position_index(ws):
    coords = np.stack(np.meshgrid(np.arange(ws), np.arange(ws), indexing="ij")).reshape(2, -1)
    rel = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0) + (ws - 1)
    return rel[..., 0] * (2 * ws - 1) + rel[..., 1]


RELATIVE_INDEX = relative_position_index(DEFAULT_CONFIG.window)


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * w + b


def window_partition(x, ws):
    B, H, W, C = x.shape
    x = x.reshape(B, H // ws, ws, W // ws, ws, C)
    return x.transpose(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, C)


def window_reverse(windows, ws, H, W):
    B = windows.shape[0] // ((H // ws) * (W // ws))
    x = windows.reshape(B, H // ws, W // ws, ws, ws, -1)
    return x.transpose(0, 1, 3, 2, 4, 5).reshape(B, H, W, -1)


def shifted_window_mask(H, W, ws, shift):
    img = np.zeros((1, H, W, 1))
    count = 0
    for h in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
        for w in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
            img[:, h, w, :] = count
            count += 1
    windows = window_partition(img, ws).squeeze(-1)
    mask = windows[:, None, :] - windows[:, :, None]
    return jnp.asarray(np.where(mask != 0, -100.0, 0.0), jnp.float32)


def window_attention(x, p: Block, num_heads, mask):
    B_, N, C = x.shape
    qkv = (x @ p.qkv_w + p.qkv_b).reshape(B_, N, 3, num_heads, C // num_heads).transpose(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    q = q * (C // num_heads) ** -0.5
    attn = q @ k.swapaxes(-2, -1)
    bias = p.rel_bias[RELATIVE_INDEX.reshape(-1)].reshape(N, N, -1).transpose(2, 0, 1)
    attn = attn + bias[None]
    if mask is not None:
        nW = mask.shape[0]
        attn = attn.reshape(B_ // nW, nW, num_heads, N, N) + mask[None, :, None]
        attn = attn.reshape(-1, num_heads, N, N)
    attn = jax.nn.softmax(attn, axis=-1)
    x = (attn @ v).transpose(0, 2, 1, 3).reshape(B_, N, C)
    return x @ p.proj_w + p.proj_b


def swin_block(x, p: Block, cfg: Config, shift):
    _, H, W, _ = x.shape
    ws = cfg.window
    if min(H, W) <= ws:
        ws, shift = min(H, W), 0
    shortcut = x
    x = layer_norm(x, p.norm1_w, p.norm1_b, cfg.eps)
    mask = shifted_window_mask(H, W, ws, shift) if shift > 0 else None
    if shift > 0:
        x = jnp.roll(x, (-shift, -shift), axis=(1, 2))
    x = window_reverse(window_attention(window_partition(x, ws), p, cfg.heads, mask), ws, H, W)
    if shift > 0:
        x = jnp.roll(x, (shift, shift), axis=(1, 2))
    x = shortcut + x
    h = layer_norm(x, p.norm2_w, p.norm2_b, cfg.eps)
    h = jax.nn.gelu(h @ p.fc1_w + p.fc1_b, approximate=False) @ p.fc2_w + p.fc2_b
    return x + h


def patch_merging(x, p: PatchMerging, eps):
    x0, x1 = x[:, 0::2, 0::2, :], x[:, 1::2, 0::2, :]
    x2, x3 = x[:, 0::2, 1::2, :], x[:, 1::2, 1::2, :]
    x = jnp.concatenate([x0, x1, x2, x3], axis=-1)
    return layer_norm(x, p.norm_w, p.norm_b, eps) @ p.reduction


def swin(params: Swin, images: jax.Array, cfg: Config = DEFAULT_CONFIG) -> jax.Array:
    """Class logits of ``images`` (NHWC)."""
    B, H, W, C = images.shape
    P = cfg.patch
    x = images.reshape(B, H // P, P, W // P, P, C).transpose(0, 1, 3, 2, 4, 5).reshape(B, H // P, W // P, P * P * C)
    x = x @ params.patch_w + params.patch_b
    for i, blk in enumerate(params.stage1):
        x = swin_block(x, blk, cfg, 0 if i % 2 == 0 else cfg.window // 2)
    x = patch_merging(x, params.merge, cfg.eps)
    for i, blk in enumerate(params.stage2):
        x = swin_block(x, blk, cfg, 0 if i % 2 == 0 else cfg.window // 2)
    x = layer_norm(x, params.norm_w, params.norm_b, cfg.eps).mean(axis=(1, 2))
    return x @ params.head_w + params.head_b
