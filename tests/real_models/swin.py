"""Swin Transformer on a 2x4 mesh: swin_plain.py with dims hints and one @mesh line, nothing else."""

from __future__ import annotations

from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh


class Config(NamedTuple):
    patch: int = 2
    window: int = 4
    heads: int = 8
    eps: float = 1e-5


DEFAULT_CONFIG = Config()


class Block(NamedTuple):
    norm1_w: Annotated[jax.Array, "dim"]
    norm1_b: Annotated[jax.Array, "dim"]
    qkv_w: Annotated[jax.Array, "dim", "qkv_features"]
    qkv_b: Annotated[jax.Array, "qkv_features"]
    rel_bias: Annotated[jax.Array, "rel", "heads"]
    proj_w: Annotated[jax.Array, "attn_features", "dim"]
    proj_b: Annotated[jax.Array, "dim"]
    norm2_w: Annotated[jax.Array, "dim"]
    norm2_b: Annotated[jax.Array, "dim"]
    fc1_w: Annotated[jax.Array, "dim", "mlp"]
    fc1_b: Annotated[jax.Array, "mlp"]
    fc2_w: Annotated[jax.Array, "mlp", "dim"]
    fc2_b: Annotated[jax.Array, "dim"]


class PatchMerging(NamedTuple):
    norm_w: Annotated[jax.Array, "merged"]
    norm_b: Annotated[jax.Array, "merged"]
    reduction: Annotated[jax.Array, "merged", "dim2"]


class Swin(NamedTuple):
    patch_w: Annotated[jax.Array, "patch_features", "dim1"]
    patch_b: Annotated[jax.Array, "dim1"]
    stage1: list[Annotated[Block, {"dim": "dim1", "qkv_features": "qkv1", "attn_features": "attn1", "mlp": "mlp1"}]]
    merge: PatchMerging
    stage2: list[Annotated[Block, {"dim": "dim2", "qkv_features": "qkv2", "attn_features": "attn2", "mlp": "mlp2"}]]
    norm_w: Annotated[jax.Array, "dim2"]
    norm_b: Annotated[jax.Array, "dim2"]
    head_w: Annotated[jax.Array, "dim2", "classes"]
    head_b: Annotated[jax.Array, "classes"]


def relative_position_index(ws):
    coords = np.stack(np.meshgrid(np.arange(ws), np.arange(ws), indexing="ij")).reshape(2, -1)
    rel = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0) + (ws - 1)
    return rel[..., 0] * (2 * ws - 1) + rel[..., 1]


RELATIVE_INDEX: Annotated[np.ndarray, "query_pos", "key_pos"] = relative_position_index(DEFAULT_CONFIG.window)


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
    mask: Annotated[jax.Array, "windows", "query_pos", "key_pos"] | None = shifted_window_mask(H, W, ws, shift) if shift > 0 else None
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


@mesh(batch=2, model=4, rules={"qkv1": "model", "attn1": "model", "heads": "model", "mlp1": "model", "qkv2": "model", "attn2": "model", "mlp2": "model"})
def swin(params: Swin, images: Annotated[jax.Array, "batch", "height", "width", "channels"], cfg: Config = DEFAULT_CONFIG) -> Annotated[jax.Array, "batch", "classes"]:
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
