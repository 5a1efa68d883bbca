"""Swin's shifted-window attention mask as timm builds it: a helper filling a numpy image of region ids by slice
assignment from the image's sizes (``img[:, h, w, :] = cnt``), partitioned into windows, ``mask = ... if shift >
0 else None`` hinted ``Annotated[jax.Array, "nw", "tq", "tk"]`` (or with ``| None``), and ``if mask is not None:``
adding it per window; also a table of positions made by a static helper and read beside a split batch.  Before:
the helper was rewritten and refused ("assignment to 'img[:, h, w, :]'"), and the conditional expression with a
None arm was refused ("the branches of this conditional expression have different layouts").  Now a helper of
Python values alone is called as written (its value the same on every device), and a name bound to an array or
None keeps both branches of an ``if`` on it."""
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh

EXPECT = "match"

WS = 4


def window_partition(x, ws):
    B, H, W, C = x.shape
    x = x.reshape(B, H // ws, ws, W // ws, ws, C)
    return x.transpose(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, C)


def shift_mask(H, W, ws, shift):
    img = np.zeros((1, H, W, 1))
    cnt = 0
    for h in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
        for w in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
            img[:, h, w, :] = cnt
            cnt += 1
    mw = window_partition(img, ws).squeeze(-1)
    m = mw[:, None, :] - mw[:, :, None]
    return jnp.asarray(np.where(m != 0, -100.0, 0.0), jnp.float32)


def positions(n):
    table = np.zeros((n, n), np.float32)
    for i in range(n):
        table[i, : i + 1] = 1.0 / (i + 1)
    return jnp.asarray(table)


def attend(x, shift, mask):
    B, H, W, C = x.shape
    if shift > 0:
        x = jnp.roll(x, (-shift, -shift), axis=(1, 2))
    win = window_partition(x, WS)
    att = win @ win.swapaxes(-1, -2) / jnp.sqrt(C)
    if mask is not None:
        nW = mask.shape[0]
        att = att.reshape(-1, nW, WS * WS, WS * WS) + mask[None]
        att = att.reshape(-1, WS * WS, WS * WS)
    out = (jax.nn.softmax(att, -1) @ win).reshape(B, H, W, C)
    if shift > 0:
        out = jnp.roll(out, (shift, shift), axis=(1, 2))
    return out


@mesh(batch=8)
def f(x: Annotated[jax.Array, "batch", "h", "w", "dim"], shift: int = 2
      ) -> Annotated[jax.Array, "batch", "h", "w", "dim"]:
    B, H, W, C = x.shape
    mask: Annotated[jax.Array, "nw", "tq", "tk"] = shift_mask(H, W, WS, shift) if shift > 0 else None
    if mask is not None:
        x = x * 1.5
    return attend(x, shift, mask) if mask is not None else attend(x, shift, None)


@mesh(batch=2, model=4, rules={"dim": "model"})
def g(x: Annotated[jax.Array, "batch", "h", "w", "dim"], shift: int = 0
      ) -> Annotated[jax.Array, "batch", "h", "w", "dim"]:
    B, H, W, C = x.shape
    mask: Annotated[jax.Array, "nw", "tq", "tk"] | None = shift_mask(H, W, WS, shift) if shift > 0 else None
    pos: Annotated[jax.Array, "h", "k"] = positions(H)
    x = x + jnp.mean(pos, axis=1)[None, :, None, None] * x * 0.1
    if shift > 0:
        x = jnp.roll(x, (-shift, -shift), axis=(1, 2))
    win = window_partition(x, WS)
    att = win @ win.swapaxes(-1, -2) / jnp.sqrt(C)
    if mask is not None:
        nW = mask.shape[0]
        att = att.reshape(-1, nW, WS * WS, WS * WS) + mask[None]
        att = att.reshape(-1, WS * WS, WS * WS)
    return (jax.nn.softmax(att, -1) @ win).reshape(B, H, W, C)


def inputs():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((8, 8, 8, 4)).astype(np.float32)
    return {"f": (x,), "g": (x,)}
