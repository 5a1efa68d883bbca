"""RWKV (v5), single device: token shift, time mixing with a per-head matrix state scanned over time, channel mixing."""

from __future__ import annotations

from typing import NamedTuple, TypedDict

import jax
import jax.numpy as jnp


class Config(NamedTuple):
    eps: float = 1e-5
    group_norm_eps: float = 64e-5


DEFAULT_CONFIG = Config()


class LayerNorm(TypedDict):
    weight: jax.Array
    bias: jax.Array


class TimeMix(TypedDict):
    time_mix_k: jax.Array
    time_mix_v: jax.Array
    time_mix_r: jax.Array
    time_mix_g: jax.Array
    time_decay: jax.Array
    time_faaaa: jax.Array
    receptance: jax.Array
    key: jax.Array
    value: jax.Array
    gate: jax.Array
    output: jax.Array
    ln_x: LayerNorm


class ChannelMix(TypedDict):
    time_mix_k: jax.Array
    time_mix_r: jax.Array
    key: jax.Array
    receptance: jax.Array
    value: jax.Array


class Block(TypedDict):
    ln1: LayerNorm
    att: TimeMix
    ln2: LayerNorm
    ffn: ChannelMix


class RWKV(TypedDict):
    emb: jax.Array
    ln0: LayerNorm
    blocks: list[Block]
    ln_out: LayerNorm
    head: jax.Array


def layer_norm(x, p, eps):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * p["weight"] + p["bias"]


def time_shift(x):
    """Each position sees the previous position's features (zeros before the first)."""
    return jnp.pad(x, ((0, 0), (1, 0), (0, 0)))[:, :-1]


def wkv(r, k, v, w, u):
    """out_t = r_t (u k_t^T v_t + S_t), S_{t+1} = w S_t + k_t^T v_t, per head, over time."""
    B, _, H, N = r.shape

    def step(state, rkv):
        r_t, k_t, v_t = rkv
        kv = k_t[..., :, None] * v_t[..., None, :]
        out = jnp.einsum("bhi,bhij->bhj", r_t, u[..., None] * kv + state)
        return w[..., None] * state + kv, out

    state = jnp.zeros((B, H, N, N), r.dtype)
    _, out = jax.lax.scan(step, state, (r.swapaxes(0, 1), k.swapaxes(0, 1), v.swapaxes(0, 1)))
    return out.swapaxes(0, 1)


def time_mixing(x, p, cfg):
    B, T, _ = x.shape
    H, N = p["time_decay"].shape
    xx = time_shift(x)
    xk = x * p["time_mix_k"] + xx * (1 - p["time_mix_k"])
    xv = x * p["time_mix_v"] + xx * (1 - p["time_mix_v"])
    xr = x * p["time_mix_r"] + xx * (1 - p["time_mix_r"])
    xg = x * p["time_mix_g"] + xx * (1 - p["time_mix_g"])
    r = (xr @ p["receptance"]).reshape(B, T, H, N)
    k = (xk @ p["key"]).reshape(B, T, H, N)
    v = (xv @ p["value"]).reshape(B, T, H, N)
    g = jax.nn.silu(xg @ p["gate"])
    w = jnp.exp(-jnp.exp(p["time_decay"]))
    out = wkv(r, k, v, w, p["time_faaaa"])
    # group norm: one group per head
    mean = out.mean(axis=-1, keepdims=True)
    var = out.var(axis=-1, keepdims=True)
    out = ((out - mean) / jnp.sqrt(var + cfg.group_norm_eps)).reshape(B, T, H * N)
    out = out * p["ln_x"]["weight"] + p["ln_x"]["bias"]
    return (out * g) @ p["output"]


def channel_mixing(x, p):
    xx = time_shift(x)
    xk = x * p["time_mix_k"] + xx * (1 - p["time_mix_k"])
    xr = x * p["time_mix_r"] + xx * (1 - p["time_mix_r"])
    k = jnp.square(jax.nn.relu(xk @ p["key"]))
    return jax.nn.sigmoid(xr @ p["receptance"]) * (k @ p["value"])


def rwkv(params: RWKV, tokens: jax.Array, cfg: Config = DEFAULT_CONFIG) -> jax.Array:
    """Next-token logits of ``tokens``."""
    x = layer_norm(params["emb"][tokens], params["ln0"], cfg.eps)
    for block in params["blocks"]:
        x = x + time_mixing(layer_norm(x, block["ln1"], cfg.eps), block["att"], cfg)
        x = x + channel_mixing(layer_norm(x, block["ln2"], cfg.eps), block["ffn"])
    return layer_norm(x, params["ln_out"], cfg.eps) @ params["head"]
