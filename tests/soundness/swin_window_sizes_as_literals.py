"""Swin's window attention with its sizes written as literals of the config, as many ports write them:
``(win @ w_qkv).reshape(win.shape[0], WS * WS, 3, NH, C // NH)``, the bias ``.reshape(WS * WS, WS * WS, -1)``
and the merge back ``.reshape(-1, WS * WS, C)``.  The tokens of a window are a dim meshify inferred (the window
partition made it), of a size it cannot know before the call, and the qkv features after it are split: before,
"split dim 'qkv_out' is not the major (first) part" (which dims do ``WS * WS, 3, NH, C // NH`` keep?).  A split
dim enters a merge only as its major part, so ``WS * WS`` can only keep the tokens, and it is checked to when the
function runs (``mr.kept_dims``); see swin_window_size_keeping_no_dim for a size that does not."""
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
    qkv = (win @ p.qkv).reshape(win.shape[0], WS * WS, 3, NH, C // NH).transpose(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    att = (q @ k.swapaxes(-2, -1)) / jnp.sqrt(C // NH)
    bias = p.rel_bias[REL.reshape(-1)].reshape(WS * WS, WS * WS, -1).transpose(2, 0, 1)
    att = jax.nn.softmax(att + bias[None], axis=-1)
    out = (att @ v).transpose(0, 2, 1, 3).reshape(-1, WS * WS, C) @ p.proj
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
