"""Mistral on a 2x4 mesh: mistral_plain.py with dims hints and one @mesh line, nothing else."""

from __future__ import annotations

from functools import partial
from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp

from meshify import mesh


class ModelArgs(NamedTuple):
    n_heads: int = 32
    n_kv_heads: int = 8
    head_dim: int = 4
    sliding_window: int = 3
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5


ARGS = ModelArgs()


class LayerWeights(NamedTuple):
    attention_norm: Annotated[jax.Array, "layers", "d_model"]
    wq: Annotated[jax.Array, "layers", "d_model", "q_features"]
    wk: Annotated[jax.Array, "layers", "d_model", "kv_features"]
    wv: Annotated[jax.Array, "layers", "d_model", "kv_features"]
    wo: Annotated[jax.Array, "layers", "q_features", "d_model"]
    ffn_norm: Annotated[jax.Array, "layers", "d_model"]
    w1: Annotated[jax.Array, "layers", "d_model", "hidden"]
    w2: Annotated[jax.Array, "layers", "hidden", "d_model"]
    w3: Annotated[jax.Array, "layers", "d_model", "hidden"]


class Weights(NamedTuple):
    tok_embeddings: Annotated[jax.Array, "vocab", "d_model"]
    layers: LayerWeights
    norm: Annotated[jax.Array, "d_model"]
    output: Annotated[jax.Array, "d_model", "vocab"]


@partial(jax.jit, static_argnames=("eps",))
def rms_norm(x, weight, eps=1e-5):
    return weight * (x * jax.lax.rsqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + eps))


@partial(jax.jit, static_argnames=("head_dim", "length", "theta"))
def precompute_freqs(head_dim, length, theta=10000.0):
    freqs = 1.0 / (theta ** (jnp.arange(0, head_dim, 2)[: head_dim // 2].astype(jnp.float32) / head_dim))
    angles = jnp.outer(jnp.arange(length, dtype=jnp.float32), freqs)
    return jnp.cos(angles), jnp.sin(angles)


def rotate(x, cos: Annotated[jax.Array, "length", "rotary"], sin: Annotated[jax.Array, "length", "rotary"]):
    x1, x2 = jnp.split(x, 2, axis=-1)
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return jnp.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)


def sliding_window_mask(length, window):
    i = jnp.arange(length)[:, None]
    j = jnp.arange(length)[None, :]
    return (j <= i) & (i - j < window)


@partial(jax.jit, static_argnames=("args",))
def attention(x, w, cos, sin, mask, args):
    assert args.n_heads % args.n_kv_heads == 0, "query heads must be a multiple of kv heads"
    bsz, seqlen, _ = x.shape
    xq = (x @ w.wq).reshape(bsz, seqlen, args.n_heads, args.head_dim)
    xk = (x @ w.wk).reshape(bsz, seqlen, args.n_kv_heads, args.head_dim)
    xv = (x @ w.wv).reshape(bsz, seqlen, args.n_kv_heads, args.head_dim)
    xq, xk = rotate(xq, cos, sin), rotate(xk, cos, sin)
    repeats = args.n_heads // args.n_kv_heads
    keys = jnp.repeat(xk, repeats, axis=2)
    values = jnp.repeat(xv, repeats, axis=2)
    scores = jnp.einsum("bqhd,bkhd->bhqk", xq, keys) * args.head_dim ** -0.5
    scores = jnp.where(mask[None, None, :, :], scores, jnp.finfo(scores.dtype).min)
    probs = jax.nn.softmax(scores.astype(jnp.float32), axis=-1).astype(x.dtype)
    out = jnp.einsum("bhqk,bkhd->bqhd", probs, values)
    return out.reshape(bsz, seqlen, -1) @ w.wo


@jax.jit
def feed_forward(x, w):
    return (jax.nn.silu(x @ w.w1) * (x @ w.w3)) @ w.w2


@mesh(batch=2, model=4, rules={"q_features": "model", "kv_features": "model", "hidden": "model", "vocab": "model"})
def mistral(weights: Weights, tokens: Annotated[jax.Array, "batch", "length"], args: ModelArgs = ARGS) -> Annotated[jax.Array, "batch", "length", "vocab"]:
    """Next-token logits of ``tokens``: the layers stacked, run by ``jax.lax.scan``."""
    assert tokens.ndim == 2
    h = weights.tok_embeddings[tokens]
    cos, sin = precompute_freqs(args.head_dim, tokens.shape[1], args.rope_theta)
    mask = sliding_window_mask(tokens.shape[1], args.sliding_window)

    def layer(h, w):
        def self_attention(x):
            return attention(x, w, cos, sin, mask, args)

        h = h + self_attention(rms_norm(h, w.attention_norm, eps=args.norm_eps))
        h = h + feed_forward(rms_norm(h, w.ffn_norm, eps=args.norm_eps), w)
        return h, None

    h, _ = jax.lax.scan(layer, h, weights.layers)
    return rms_norm(h, weights.norm, eps=args.norm_eps) @ weights.output
