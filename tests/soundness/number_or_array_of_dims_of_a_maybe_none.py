"""``m if m is not None else 1.0`` where ``m`` is an array of dims or None: an optional mask parameter
(``Optional[Tensor["batch", "e"]] = None``, passed and not), a mask built under a flag known only when traced (on
and off), a partial sum's arm (completed there), ``bias if bias is not None else 0.0`` added in place, and
``m if m is not None else jnp.ones_like(h)``; each read as ``y * m`` or ``y + m`` beside an array of its layout (the
number broadcasts to what the array gives). Values and gradients. Before: "the branches of this conditional
expression have different layouts" (a scalar ``m`` ran; one of dims did not). After an if that rebinds it in one
branch only, it is a number or an array still (read as above)."""
from typing import Optional

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], mask: Optional[Tensor["batch", "e"]] = None):
    m = mask if mask is not None else 1.0
    return jnp.tanh(x @ w) * m


@mesh(batch=2, model=4, rules={"e": "model"})
def f_none(x: Tensor["batch", "d"], w: Tensor["d", "e"], mask: Optional[Tensor["batch", "e"]] = None):
    m = mask if mask is not None else 1.0
    return jnp.tanh(x @ w) * m


def masked(x, w, flag):
    h = x @ w
    m = None
    if flag:
        m = jnp.tanh(h) > 0.1
    out = m if m is not None else 1.0
    return h * out - out


@mesh(batch=2, model=4, rules={"e": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    return masked(x, w, flag)


@mesh(batch=2, model=4, rules={"e": "model"})
def g_off(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    return masked(x, w, flag)


def biased(x, w, v, flag):
    h = jnp.tanh(x @ w)
    bias = None
    if flag:
        bias = h @ v  # a partial sum over 'model' (contracted 'e' split)
    y = jnp.sin(x) + (bias if bias is not None else 0.0)
    scale = bias if bias is not None else 2.0
    ones = bias if bias is not None else jnp.ones_like(x)
    return y / scale + ones


@mesh(batch=2, model=4, rules={"e": "model"})
def k(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], flag):
    return biased(x, w, v, flag)


@mesh(batch=2, model=4, rules={"e": "model"})
def k_off(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], flag):
    return biased(x, w, v, flag)


@mesh(batch=2, model=4, rules={"e": "model"})
def merged(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag, other):
    m = None
    if flag:
        m = jnp.cos(x @ w)
    out = m if m is not None else 1.0
    if other:
        out = jnp.sin(x @ w)  # (after the if: a number or an array still, where other is off)
    return jnp.tanh(x @ w) * out


@mesh(batch=2, model=4, rules={"e": "model"})
def merged_off(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag, other):
    m = None
    if flag:
        m = jnp.cos(x @ w)
    out = m if m is not None else 1.0
    if other:
        out = jnp.sin(x @ w)
    return jnp.tanh(x @ w) * out


def inputs():
    rng = np.random.default_rng(3506)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    w = (rng.standard_normal((5, 16)) / 2).astype(np.float32)
    v = (rng.standard_normal((16, 5)) / 4).astype(np.float32)
    mask = (rng.standard_normal((4, 16)) > 0).astype(np.float32)
    return {"f": (x, w, mask), "f_none": (x, w), "g": (x, w, True), "g_off": (x, w, False),
            "k": (x, w, v, True), "k_off": (x, w, v, False), "merged": (x, w, True, True),
            "merged_off": (x, w, False, False)}
