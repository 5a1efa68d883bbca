"""ViT, single device: patch embedding by reshape, a class token, learned positions, encoder blocks."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class Config(NamedTuple):
    patch: int = 4
    eps: float = 1e-6


DEFAULT_CONFIG = Config()


class Encoder(NamedTuple):
    ln1_scale: jax.Array
    ln1_bias: jax.Array
    wq: jax.Array
    wk: jax.Array
    wv: jax.Array
    wo: jax.Array
    ln2_scale: jax.Array
    ln2_bias: jax.Array
    w_mlp1: jax.Array
    b_mlp1: jax.Array
    w_mlp2: jax.Array
    b_mlp2: jax.Array


class ViT(NamedTuple):
    patch_kernel: jax.Array
    patch_bias: jax.Array
    cls_token: jax.Array
    pos_embedding: jax.Array
    encoder: Encoder
    ln_scale: jax.Array
    ln_bias: jax.Array
    head: jax.Array


def layer_norm(x, scale, bias, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = jnp.square(x - mean).mean(axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * scale + bias


def patchify(images, patch):
    n, h, w, c = images.shape
    x = images.reshape(n, h // patch, patch, w // patch, patch, c)
    x = x.transpose(0, 1, 3, 2, 4, 5)
    return x.reshape(n, (h // patch) * (w // patch), patch * patch * c)


def self_attention(x, p):
    q = jnp.einsum("bnd,dhk->bnhk", x, p.wq)
    k = jnp.einsum("bnd,dhk->bnhk", x, p.wk)
    v = jnp.einsum("bnd,dhk->bnhk", x, p.wv)
    scores = jnp.einsum("bqhk,bshk->bhqs", q, k) * q.shape[-1] ** -0.5
    out = jnp.einsum("bhqs,bshk->bqhk", jax.nn.softmax(scores, axis=-1), v)
    return jnp.einsum("bqhk,hkd->bqd", out, p.wo)


def encoder_block(x, p, cfg):
    x = x + self_attention(layer_norm(x, p.ln1_scale, p.ln1_bias, cfg.eps), p)
    y = layer_norm(x, p.ln2_scale, p.ln2_bias, cfg.eps)
    y = jax.nn.gelu(jnp.einsum("bnd,df->bnf", y, p.w_mlp1) + p.b_mlp1)
    return x + jnp.einsum("bnf,fd->bnd", y, p.w_mlp2) + p.b_mlp2


def vit(params: ViT, images: jax.Array, cfg: Config = DEFAULT_CONFIG) -> jax.Array:
    """Class logits of ``images`` (NHWC), read from the class token."""
    x = patchify(images, cfg.patch) @ params.patch_kernel + params.patch_bias
    cls = jnp.broadcast_to(params.cls_token, (x.shape[0], 1, x.shape[-1]))
    x = jnp.concatenate([cls, x], axis=1) + params.pos_embedding
    x, _ = jax.lax.scan(lambda h, p: (encoder_block(h, p, cfg), None), x, params.encoder)
    x = layer_norm(x, params.ln_scale, params.ln_bias, cfg.eps)
    return x[:, 0] @ params.head
