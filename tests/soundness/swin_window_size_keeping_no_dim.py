"""A reshape whose literal sizes meshify takes to keep the whole dims before a split one (see
swin_window_sizes_as_literals), where they do not: ``(win @ w).reshape(n, 2, 6, NH, C // NH)`` of
[windows, tok, qkv_features] with 4 tokens a window and the features split.  On one device the 2 takes half the
tokens and the 6 merges the other half with the features, which the features' blocks cannot do; locally the
sizes would still fit (a silently different array).  Refused when the function runs (``mr.kept_dims``: size 2
keeps dim 1, which is 4 in this call)."""
from typing import Annotated

import jax
import numpy as np

from meshify import mesh

EXPECT = "error"

WS = 2
NH = 4


def window_partition(x, ws):
    B, H, W, C = x.shape
    x = x.reshape(B, H // ws, ws, W // ws, ws, C)
    return x.transpose(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, C)


@mesh(batch=2, model=4, rules={"qkv_out": "model"})
def f(x: Annotated[jax.Array, "batch", "h", "w", "dim"], w: Annotated[jax.Array, "dim", "qkv_out"]):
    win = window_partition(x, WS)
    C = x.shape[-1]
    qkv = (win @ w).reshape(win.shape[0], 2, 6, NH, C // NH)
    return (qkv[:, :, 0] * qkv[:, :, 1]).sum()


def inputs():
    rng = np.random.default_rng(3)
    return rng.standard_normal((4, 4, 4, 16)).astype(np.float32), rng.standard_normal((16, 48)).astype(np.float32)
