"""Branches on a loop's index that real code writes: a U-Net's ``if i < len(ws) - 1: h = downsample(h)`` (one
branch leaves dims meshify inferred, the other the user's: one value, the user's names); RWKV's ``if i == 0:
x = ln0(x)`` after a vocab-parallel lookup (a partial sum completed on the path that skips the branch, by an
``else`` meshify writes, or before the loop)."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def downsample(h):
    B, H, W, C = h.shape
    return h.reshape(B, H // 2, 2, W // 2, 2, C).mean(axis=(2, 4))


def upsample(h):
    return jnp.repeat(jnp.repeat(h, 2, axis=1), 2, axis=2)


@mesh(batch=2, model=4, rules={"ch": "model"})
def unet(x: Tensor["batch", "height", "width", "ch"], ws: tuple[Tensor["ch", "ch"], ...]
         ) -> Tensor["batch", "height", "width", "ch"]:
    h = x
    hs = []
    for i, w in enumerate(ws):
        h = jax.nn.gelu(h @ w)
        hs.append(h)
        if i < len(ws) - 1:
            h = downsample(h)
    for i, w in enumerate(ws):
        h = jax.nn.gelu(h @ w) + hs.pop()
        if i < len(ws) - 1:
            h = upsample(h)
    return h


@mesh(batch=2, model=4, rules={"vocab": "model"})
def rwkv(emb: Tensor["vocab", "d"], ws: list[Tensor["d", "d"]], tokens: Tensor["batch"], first: int = 0):
    x = emb[tokens]
    for i, w in enumerate(ws):
        if i == first:
            x = jnp.tanh(x)
        x = x @ w
    y = emb[tokens] * 2.0
    if first > 0:
        y = jax.nn.gelu(y)
    return x + y


def inputs():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 8, 8, 8)).astype(np.float32)
    ws = tuple((rng.normal(size=(8, 8)) * 0.3).astype(np.float32) for _ in range(3))
    emb = rng.normal(size=(16, 8)).astype(np.float32)
    tokens = np.array([0, 3, 15, 7], np.int32)
    return {"unet": (x, ws), "rwkv": (emb, list(ws), tokens)}


def scenario(mod, pick):
    args = inputs()
    emb, ws, tokens = args["rwkv"]
    out = [pick(mod.unet)(*args["unet"])]
    out += [pick(mod.rwkv)(emb, ws, tokens, first) for first in (0, 1, 5)]
    out.append(jax.grad(lambda e: pick(mod.rwkv)(e, ws, tokens, 1).sum())(emb))
    out.append(jax.grad(lambda x: pick(mod.unet)(x, args["unet"][1]).sum())(args["unet"][0]))
    return out
