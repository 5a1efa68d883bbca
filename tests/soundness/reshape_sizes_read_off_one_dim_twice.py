"""``B, N, _ = s.shape; s.reshape(B, N, N)`` where ``N`` is read off a split dim and stands for another dim of
the same size too (Swin's ``attn.reshape(B_ // nW, nW, nH, N, N)``, any code reusing one size for q and k):
neither size keeps a dim by its name (a size read off one dim for two says nothing about which is which);
the dims between the kept ones are merged and split again, the split taking the major part.  Was silently
wrong: the second ``N`` kept ``q`` and the local reshape reordered each block (max abs diff 0.52)."""

from typing import Annotated

import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"q": "model"})
def f(s: Annotated[jax.Array, "batch", "q", "k"]):
    B, N, _ = s.shape
    return jax.nn.softmax(s.reshape(B, N, N), axis=-1)


@mesh(batch=2, model=4, rules={"heads": "model"})
def windows(attn: Tensor["bw", "heads", "q", "k"], mask: Tensor["w", "q", "k"], n_windows: int = 4):
    B_, nH, N, _ = attn.shape
    a = attn.reshape(B_ // n_windows, n_windows, nH, N, N) + mask[None, :, None]
    return jax.nn.softmax(a.reshape(-1, nH, N, N), axis=-1)


@mesh(batch=8)
def g(s: Tensor["batch", "q", "k"]):
    B, _, N = s.shape
    return (s.reshape(B, N, N) * 2.0).sum(1)


def inputs():
    rng = np.random.default_rng(0)
    s = rng.normal(size=(4, 8, 8)).astype(np.float32)
    attn = rng.normal(size=(8, 4, 8, 8)).astype(np.float32)
    mask = (rng.random(size=(4, 8, 8)) < 0.3).astype(np.float32) * -100.0
    return {"f": (s,), "windows": (attn, mask), "g": (rng.normal(size=(8, 8, 8)).astype(np.float32),)}
