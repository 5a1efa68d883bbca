"""timm's and DiT's attention, as PyTorch ports write it: the fused QKV projection (its features split over
'model') reshaped to (B, N, 3, heads, head_dim) and transposed, q, k, v taken by index or unpacked. The
three sections are cut apart first (each device's chunks moved to the device holding that block of their
section), then the heads take the split. Heads as a parameter and a literal; gradients."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"qkv_features": "model", "attn_features": "model"})
def timm_attention(x: Tensor["batch", "tokens", "d_model"], qkv_w: Tensor["d_model", "qkv_features"],
                   proj_w: Tensor["attn_features", "d_model"], num_heads: int = 8):
    B, N, C = x.shape
    qkv = (x @ qkv_w).reshape(B, N, 3, num_heads, C // num_heads).transpose(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    attn = jax.nn.softmax((q @ k.swapaxes(-2, -1)) * (C // num_heads) ** -0.5, axis=-1)
    return (attn @ v).transpose(0, 2, 1, 3).reshape(B, N, C) @ proj_w


@mesh(batch=2, model=4, rules={"qkv_features": "model", "attn_features": "model"})
def dit_attention(x: Tensor["batch", "tokens", "d_model"], qkv_w: Tensor["d_model", "qkv_features"],
                  proj_w: Tensor["attn_features", "d_model"]):
    B, N, C = x.shape
    qkv = jnp.einsum("bnd,df->bnf", x, qkv_w).reshape(B, N, 3, 4, C // 4)
    q, k, v = jnp.moveaxis(qkv, 2, 0)
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(C // 4)
    o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v)
    return o.reshape(B, N, C) @ proj_w


def inputs():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 6, 32)).astype(np.float32)
    w = (rng.normal(size=(32, 96)) / 5).astype(np.float32)
    p = (rng.normal(size=(32, 32)) / 5).astype(np.float32)
    return {"timm_attention": (x, w, p), "dit_attention": (x, w, p)}
