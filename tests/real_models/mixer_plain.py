"""MLP-Mixer, single device: one MlpBlock class for the token-mixing and the channel-mixing MLPs."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class Config(NamedTuple):
    patch: int = 4
    eps: float = 1e-6


DEFAULT_CONFIG = Config()


class MlpBlock(NamedTuple):
    w1: jax.Array
    b1: jax.Array
    w2: jax.Array
    b2: jax.Array


class MixerBlock(NamedTuple):
    ln1_scale: jax.Array
    ln1_bias: jax.Array
    token_mixing: MlpBlock
    ln2_scale: jax.Array
    ln2_bias: jax.Array
    channel_mixing: MlpBlock


class Mixer(NamedTuple):
    stem_kernel: jax.Array
    stem_bias: jax.Array
    blocks: tuple[MixerBlock, ...]
    ln_scale: jax.Array
    ln_bias: jax.Array
    head: jax.Array


def layer_norm(x, scale, bias, eps):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * scale + bias


def mlp_block(x, p: MlpBlock):
    y = jax.nn.gelu(x @ p.w1 + p.b1)
    return y @ p.w2 + p.b2


def mixer_block(x, p: MixerBlock, cfg):
    y = layer_norm(x, p.ln1_scale, p.ln1_bias, cfg.eps)
    y = jnp.swapaxes(y, 1, 2)
    y = mlp_block(y, p.token_mixing)
    x = x + jnp.swapaxes(y, 1, 2)
    y = layer_norm(x, p.ln2_scale, p.ln2_bias, cfg.eps)
    return x + mlp_block(y, p.channel_mixing)


def mixer(params: Mixer, images: jax.Array, cfg: Config = DEFAULT_CONFIG) -> jax.Array:
    """Class logits of ``images`` (NHWC), averaged over the patches."""
    n, h, w, c = images.shape
    x = images.reshape(n, h // cfg.patch, cfg.patch, w // cfg.patch, cfg.patch, c)
    x = x.transpose(0, 1, 3, 2, 4, 5).reshape(n, -1, cfg.patch * cfg.patch * c)
    x = x @ params.stem_kernel + params.stem_bias
    for block in params.blocks:
        x = mixer_block(x, block, cfg)
    x = layer_norm(x, params.ln_scale, params.ln_bias, cfg.eps)
    return jnp.mean(x, axis=1) @ params.head
