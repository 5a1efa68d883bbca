"""MLP-Mixer on a 2x4 mesh: mixer_plain.py with dims hints and one @mesh line, nothing else."""

from __future__ import annotations

from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp

from meshify import mesh


class Config(NamedTuple):
    patch: int = 4
    eps: float = 1e-6


DEFAULT_CONFIG = Config()


class MlpBlock(NamedTuple):
    w1: Annotated[jax.Array, "d_in", "d_hidden"]
    b1: Annotated[jax.Array, "d_hidden"]
    w2: Annotated[jax.Array, "d_hidden", "d_in"]
    b2: Annotated[jax.Array, "d_in"]


class MixerBlock(NamedTuple):
    ln1_scale: Annotated[jax.Array, "d_model"]
    ln1_bias: Annotated[jax.Array, "d_model"]
    token_mixing: Annotated[MlpBlock, {"d_in": "tokens", "d_hidden": "tokens_ff"}]
    ln2_scale: Annotated[jax.Array, "d_model"]
    ln2_bias: Annotated[jax.Array, "d_model"]
    channel_mixing: Annotated[MlpBlock, {"d_in": "d_model", "d_hidden": "d_ff"}]


class Mixer(NamedTuple):
    stem_kernel: Annotated[jax.Array, "patch_features", "d_model"]
    stem_bias: Annotated[jax.Array, "d_model"]
    blocks: tuple[MixerBlock, ...]
    ln_scale: Annotated[jax.Array, "d_model"]
    ln_bias: Annotated[jax.Array, "d_model"]
    head: Annotated[jax.Array, "d_model", "classes"]


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


@mesh(batch=2, model=4, rules={"tokens_ff": "model", "d_ff": "model"})
def mixer(params: Mixer, images: Annotated[jax.Array, "batch", "height", "width", "channels"], cfg: Config = DEFAULT_CONFIG) -> Annotated[jax.Array, "batch", "classes"]:
    """Class logits of ``images`` (NHWC), averaged over the patches."""
    n, h, w, c = images.shape
    x = images.reshape(n, h // cfg.patch, cfg.patch, w // cfg.patch, cfg.patch, c)
    x = x.transpose(0, 1, 3, 2, 4, 5).reshape(n, -1, cfg.patch * cfg.patch * c)
    x = x @ params.stem_kernel + params.stem_bias
    for block in params.blocks:
        x = mixer_block(x, block, cfg)
    x = layer_norm(x, params.ln_scale, params.ln_bias, cfg.eps)
    return jnp.mean(x, axis=1) @ params.head
