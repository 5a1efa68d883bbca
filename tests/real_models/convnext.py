"""ConvNeXt on a 2x4 mesh: convnext_plain.py with dims hints and one @mesh line, nothing else."""

from __future__ import annotations

from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp

from meshify import mesh


class Config(NamedTuple):
    drop_path_rate: float = 0.1
    layer_norm_eps: float = 1e-6


DEFAULT_CONFIG = Config()


class Block(NamedTuple):
    dwconv_kernel: Annotated[jax.Array, "kernel_h", "kernel_w", "1", "dim"]
    dwconv_bias: Annotated[jax.Array, "dim"]
    norm_weight: Annotated[jax.Array, "dim"]
    norm_bias: Annotated[jax.Array, "dim"]
    pwconv1_w: Annotated[jax.Array, "dim", "hidden"]
    pwconv1_b: Annotated[jax.Array, "hidden"]
    pwconv2_w: Annotated[jax.Array, "hidden", "dim"]
    pwconv2_b: Annotated[jax.Array, "dim"]
    gamma: Annotated[jax.Array, "dim"]


class Downsample(NamedTuple):
    norm_weight: Annotated[jax.Array, "dim1"]
    norm_bias: Annotated[jax.Array, "dim1"]
    kernel: Annotated[jax.Array, "down_h", "down_w", "dim1", "dim2"]
    bias: Annotated[jax.Array, "dim2"]


class ConvNeXt(NamedTuple):
    stem_kernel: Annotated[jax.Array, "patch_h", "patch_w", "channels", "dim1"]
    stem_bias: Annotated[jax.Array, "dim1"]
    stem_norm_weight: Annotated[jax.Array, "dim1"]
    stem_norm_bias: Annotated[jax.Array, "dim1"]
    stage1: list[Annotated[Block, {"dim": "dim1", "hidden": "hidden1"}]]
    downsample: Downsample
    stage2: list[Annotated[Block, {"dim": "dim2", "hidden": "hidden2"}]]
    norm_weight: Annotated[jax.Array, "dim2"]
    norm_bias: Annotated[jax.Array, "dim2"]
    head_w: Annotated[jax.Array, "dim2", "classes"]
    head_b: Annotated[jax.Array, "classes"]


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


@mesh(batch=2, model=4, rules={"dim1": "model", "dim2": "model"})
def convnext(params: ConvNeXt, images: Annotated[jax.Array, "batch", "height", "width", "channels"], key: Annotated[jax.Array, ()], cfg: Config = DEFAULT_CONFIG,
             training: bool = True) -> Annotated[jax.Array, "batch", "classes"]:
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
