"""Swin's shifted-window attention as timm writes it, heads split over 'model': a module-level numpy table of
relative position ids hinted ``Annotated[np.ndarray, ...]``, ``jnp.roll`` shifts over the image, window partition
reshapes, a fused qkv reshaped ``(B_, N, 3, NH, C // NH)``, and the relative position bias gathered as
``table[REL.reshape(-1)].reshape(N, N, -1)``.  Before: ``Annotated[np.ndarray, ...]`` was not read as a hint (the
table's dims unknown, "index ... whose dims meshify cannot infer"), and the trailing -1 keeping the split heads
was refused ("split dim 'heads' is not the major (first) part"); now -1 is that dim, checked when the function
runs (``mr.call_block``)."""
from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh

EXPECT = "match"

WS = 4
NH = 4


class Attn(NamedTuple):
    qkv: Annotated[jax.Array, "dim", "qkv_out"]
    proj: Annotated[jax.Array, "inner", "dim"]
    rel_bias: Annotated[jax.Array, "rel", "heads"]
    norm: Annotated[jax.Array, "dim"]


def _relative_ids(ws):
    coords = np.stack(np.meshgrid(np.arange(ws), np.arange(ws), indexing="ij")).reshape(2, -1)
    rel = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0) + (ws - 1)
    return rel[..., 0] * (2 * ws - 1) + rel[..., 1]


REL: Annotated[np.ndarray, "tok_q", "tok_k"] = _relative_ids(WS)


def window_partition(x, ws):
    B, H, W, C = x.shape
    x = x.reshape(B, H // ws, ws, W // ws, ws, C)
    return x.transpose(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, C)


def window_reverse(windows, ws, H, W):
    B = windows.shape[0] // ((H // ws) * (W // ws))
    x = windows.reshape(B, H // ws, W // ws, ws, ws, -1)
    return x.transpose(0, 1, 3, 2, 4, 5).reshape(B, H, W, -1)


def layer_norm(x, w, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / jnp.sqrt(v + eps) * w


@mesh(batch=2, model=4, rules={"qkv_out": "model", "inner": "model", "heads": "model"})
def f(p: Attn, x: Annotated[jax.Array, "batch", "h", "w", "dim"], shift: int = 2
      ) -> Annotated[jax.Array, "batch", "h", "w", "dim"]:
    B, H, W, C = x.shape
    shortcut = x
    x = layer_norm(x, p.norm)
    if shift:
        x = jnp.roll(x, (-shift, -shift), axis=(1, 2))
    win = window_partition(x, WS)
    B_, N, C_ = win.shape
    qkv = (win @ p.qkv).reshape(B_, N, 3, NH, C_ // NH).transpose(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    att = (q @ k.swapaxes(-2, -1)) / jnp.sqrt(C_ // NH)
    bias = p.rel_bias[REL.reshape(-1)].reshape(N, N, -1).transpose(2, 0, 1)
    att = jax.nn.softmax(att + bias[None], axis=-1)
    out = (att @ v).transpose(0, 2, 1, 3).reshape(B_, N, C_) @ p.proj
    x = window_reverse(out, WS, H, W)
    if shift:
        x = jnp.roll(x, (shift, shift), axis=(1, 2))
    return shortcut + x


def inputs():
    rng = np.random.default_rng(7)
    c = 16
    p = Attn((rng.standard_normal((c, 3 * c)) * 0.2).astype(np.float32),
             (rng.standard_normal((c, c)) * 0.2).astype(np.float32),
             rng.standard_normal(((2 * WS - 1) ** 2, NH)).astype(np.float32), np.ones(c, np.float32))
    return p, rng.standard_normal((4, 8, 8, c)).astype(np.float32)
