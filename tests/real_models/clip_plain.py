"""CLIP, single device: an image tower and a text tower trained by the symmetric contrastive loss."""

from __future__ import annotations

from typing import NamedTuple, TypedDict

import jax
import jax.numpy as jnp


class Config(NamedTuple):
    patch: int = 4
    vision_heads: int = 8
    text_heads: int = 8
    eps: float = 1e-5


DEFAULT_CONFIG = Config()


class LayerNorm(TypedDict):
    scale: jax.Array
    bias: jax.Array


class ResidualAttentionBlock(TypedDict):
    ln_1: LayerNorm
    in_proj_weight: jax.Array
    in_proj_bias: jax.Array
    out_proj_weight: jax.Array
    out_proj_bias: jax.Array
    ln_2: LayerNorm
    c_fc_weight: jax.Array
    c_fc_bias: jax.Array
    c_proj_weight: jax.Array
    c_proj_bias: jax.Array


class VisionTransformer(TypedDict):
    conv1: jax.Array
    class_embedding: jax.Array
    positional_embedding: jax.Array
    ln_pre: LayerNorm
    blocks: list[ResidualAttentionBlock]
    ln_post: LayerNorm
    proj: jax.Array


class TextTransformer(TypedDict):
    token_embedding: jax.Array
    positional_embedding: jax.Array
    blocks: list[ResidualAttentionBlock]
    ln_final: LayerNorm
    text_projection: jax.Array


class CLIP(TypedDict):
    visual: VisionTransformer
    text: TextTransformer
    logit_scale: jax.Array


def layer_norm(x, p, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * p["scale"] + p["bias"]


def attention(x, p, heads, mask):
    B, L, D = x.shape
    qkv = x @ p["in_proj_weight"].T + p["in_proj_bias"]
    q, k, v = jnp.split(qkv, 3, axis=-1)
    q = q.reshape(B, L, heads, -1).transpose(0, 2, 1, 3)
    k = k.reshape(B, L, heads, -1).transpose(0, 2, 1, 3)
    v = v.reshape(B, L, heads, -1).transpose(0, 2, 1, 3)
    scores = q @ k.transpose(0, 1, 3, 2) / jnp.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask
    out = jax.nn.softmax(scores, axis=-1) @ v
    out = out.transpose(0, 2, 1, 3).reshape(B, L, D)
    return out @ p["out_proj_weight"].T + p["out_proj_bias"]


def quick_gelu(x):
    return x * jax.nn.sigmoid(1.702 * x)


def residual_block(x, p, heads, mask, eps):
    x = x + attention(layer_norm(x, p["ln_1"], eps), p, heads, mask)
    h = quick_gelu(layer_norm(x, p["ln_2"], eps) @ p["c_fc_weight"].T + p["c_fc_bias"])
    return x + h @ p["c_proj_weight"].T + p["c_proj_bias"]


def encode_image(p, images, cfg):
    x = jax.lax.conv_general_dilated(images, p["conv1"], window_strides=(cfg.patch, cfg.patch), padding="VALID",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    B = x.shape[0]
    x = x.reshape(B, -1, x.shape[-1])
    cls = jnp.broadcast_to(p["class_embedding"], (B, 1, x.shape[-1]))
    x = jnp.concatenate([cls, x], axis=1) + p["positional_embedding"]
    x = layer_norm(x, p["ln_pre"], cfg.eps)
    for block in p["blocks"]:
        x = residual_block(x, block, cfg.vision_heads, None, cfg.eps)
    return layer_norm(x[:, 0, :], p["ln_post"], cfg.eps) @ p["proj"]


def encode_text(p, text, cfg):
    L = text.shape[1]
    x = p["token_embedding"][text] + p["positional_embedding"][:L]
    mask = jnp.triu(jnp.full((L, L), -jnp.inf), 1)
    for block in p["blocks"]:
        x = residual_block(x, block, cfg.text_heads, mask, cfg.eps)
    x = layer_norm(x, p["ln_final"], cfg.eps)
    # the features of each sequence's end-of-text token (the highest id)
    return x[jnp.arange(x.shape[0]), text.argmax(axis=-1)] @ p["text_projection"]


def cross_entropy(logits, labels):
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=-1))


def clip(params: CLIP, images: jax.Array, text: jax.Array, cfg: Config = DEFAULT_CONFIG) -> jax.Array:
    """The symmetric contrastive loss of a batch of (image, caption) pairs."""
    image_features = encode_image(params["visual"], images, cfg)
    text_features = encode_text(params["text"], text, cfg)
    image_features = image_features / jnp.linalg.norm(image_features, axis=-1, keepdims=True)
    text_features = text_features / jnp.linalg.norm(text_features, axis=-1, keepdims=True)
    logit_scale = jnp.exp(params["logit_scale"])
    logits_per_image = logit_scale * image_features @ text_features.T
    logits_per_text = logits_per_image.T
    labels = jnp.arange(images.shape[0])
    return (cross_entropy(logits_per_image, labels) + cross_entropy(logits_per_text, labels)) / 2
