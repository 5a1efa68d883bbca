"""ConvNeXt, single device: a stride-4 patchify stem, depthwise 7x7 blocks with LayerScale and stochastic depth."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class Config(NamedTuple):
    drop_path_rate: float = 0.1
    layer_norm_eps: float = 1e-6


DEFAULT_CONFIG = Config()


class Block(NamedTuple):
    dwconv_kernel: jax.Array
    dwconv_bias: jax.Array
    norm_weight: jax.Array
    norm_bias: jax.Array
    pwconv1_w: jax.Array
    pwconv1_b: jax.Array
    pwconv2_w: jax.Array
    pwconv2_b: jax.Array
    gamma: jax.Array


class Downsample(NamedTuple):
    norm_weight: jax.Array
    norm_bias: jax.Array
    kernel: jax.Array
    bias: jax.Array


class ConvNeXt(NamedTuple):
    stem_kernel: jax.Array
    stem_bias: jax.Array
    stem_norm_weight: jax.Array
    stem_norm_bias: jax.Array
    stage1: list[Block]
    downsample: Downsample
    stage2: list[Block]
    norm_weight: jax.Array
    norm_bias: jax.Array
    head_w: jax.Array
    head_b: jax.Array


def conv2d(x, kernel, stride=1, padding=0, groups=1):
    return jax.lax.conv_general_dilated(x, kernel, (stride, stride), ((padding, padding), (padding, padding)),
                                        feature_group_count=groups, dimension_numbers=("NHWC", "HWIO", "NHWC"))


def layer_norm(x, weight, bias, eps):  # channels_last: over the last dim
    u = x.mean(-1, keepdims=True)
    s = ((x - u) ** 2).mean(-1, keepdims=True)
    return (x - u) / jnp.sqrt(s + eps) * weight + bias


def drop_path(x, key, drop_prob, training):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1.0 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    mask = jax.random.bernoulli(key, keep_prob, shape)
    return jnp.where(mask, x / keep_prob, 0.0)


def block(x, p: Block, key, drop_prob, training, eps):
    shortcut = x
    x = conv2d(x, p.dwconv_kernel, padding=3, groups=x.shape[-1]) + p.dwconv_bias
    x = layer_norm(x, p.norm_weight, p.norm_bias, eps)
    x = jax.nn.gelu(x @ p.pwconv1_w + p.pwconv1_b, approximate=False)
    x = x @ p.pwconv2_w + p.pwconv2_b
    x = p.gamma * x
    return shortcut + drop_path(x, key, drop_prob, training)


def convnext(params: ConvNeXt, images: jax.Array, key: jax.Array, cfg: Config = DEFAULT_CONFIG,
             training: bool = True) -> jax.Array:
    """Class logits of ``images`` (NHWC)."""
    eps = cfg.layer_norm_eps
    depth = len(params.stage1) + len(params.stage2)
    dp_rates = [cfg.drop_path_rate * i / (depth - 1) for i in range(depth)]
    keys = jax.random.split(key, depth)
    x = conv2d(images, params.stem_kernel, stride=4) + params.stem_bias
    x = layer_norm(x, params.stem_norm_weight, params.stem_norm_bias, eps)
    for i, p in enumerate(params.stage1):
        x = block(x, p, keys[i], dp_rates[i], training, eps)
    down = params.downsample
    x = layer_norm(x, down.norm_weight, down.norm_bias, eps)
    x = conv2d(x, down.kernel, stride=2) + down.bias
    for i, p in enumerate(params.stage2, start=len(params.stage1)):
        x = block(x, p, keys[i], dp_rates[i], training, eps)
    x = layer_norm(x.mean(axis=(1, 2)), params.norm_weight, params.norm_bias, eps)
    return x @ params.head_w + params.head_b
