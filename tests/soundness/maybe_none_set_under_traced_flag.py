"""``b = None`` then ``if flag: b = ...`` with ``flag`` known only when traced (a static parameter without a
default, ``cfg.use_bias`` of an unhinted config object), then ``if b is not None: y = y + b``; also ``b = None if
not flag else ...`` and ``if flag: ... else: b = None``.  After the ``if`` that binds it, ``b`` is an array or None
(here a partial sum, completed where it is an array: ``mr.psum(b, ...) if b is not None else None`` in the branch
that leaves it as it was), both branches of the later test kept, and it is returned as an array or None.  Each
body runs with the flag on and off (``*_off``), on 2x4 and 1x8, float32 and float16 (odd unsplit dim ``d``),
gradients of each; ``l``: set in a Python loop under the flag.  Before: "'b' has layout [e/'model'] partial over 'batch' after one branch and None after the
other"."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


class Config(NamedTuple):
    use_bias: bool
    scale: float


def set_under_flag(x, w, flag):
    y = jnp.tanh(x @ w)
    b = None
    if flag:
        b = jnp.sum(x @ w, axis=0)
    if b is not None:
        y = y + b
    return y


def ifexp_of_config(x, w, cfg):
    y = jnp.tanh(x @ w) * cfg.scale
    b = None if not cfg.use_bias else jnp.mean(x @ w, axis=0)
    if b is not None:
        y = y + b
    return y, b


def else_none(x, w, flag):
    if flag:
        b = jnp.sum(jax.nn.relu(x) @ w, axis=0) * 0.25
    else:
        b = None
    if b is None:
        return x @ w, b
    return x @ w - b, b


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    return set_under_flag(x, w, flag)


@mesh(batch=2, model=4, rules={"e": "model"})
def f_off(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    y = jnp.tanh(x @ w)
    b = None
    if flag:
        b = jnp.sum(x @ w, axis=0)
    if b is not None:
        y = y + b
    return y


@mesh(batch=1, model=8, rules={"e": "model"})
def f16(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    return set_under_flag(x, w, flag)


@mesh(batch=2, model=4, rules={"e": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"], cfg):
    return ifexp_of_config(x, w, cfg)


@mesh(batch=1, model=8, rules={"e": "model"})
def g_off(x: Tensor["batch", "d"], w: Tensor["d", "e"], cfg):
    y = jnp.tanh(x @ w) * cfg.scale
    b = None if not cfg.use_bias else jnp.mean(x @ w, axis=0)
    if b is not None:
        y = y + b
    return y, b


@mesh(batch=2, model=4, rules={"e": "model"})
def h(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    return else_none(x, w, flag)


@mesh(batch=1, model=8, rules={"e": "model"})
def h_off(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    return else_none(x, w, flag)


def set_in_a_loop(x, w, v, flag):
    b = None
    h = x
    for _ in range(3):
        h = jnp.tanh(h @ w) @ v
        if flag:
            b = jnp.sum(h, axis=0)
    if b is not None:
        h = h + b
    else:
        h = h - jnp.mean(h)
    return h


@mesh(batch=2, model=4, rules={"e": "model"})
def l(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], flag):
    return set_in_a_loop(x, w, v, flag)


@mesh(batch=2, model=4, rules={"e": "model"})
def l_off(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], flag):
    return set_in_a_loop(x, w, v, flag)


def inputs():
    rng = np.random.default_rng(1501)
    x = rng.standard_normal((4, 5)).astype(np.float32) - 0.5
    w = (rng.standard_normal((5, 16)) / 3).astype(np.float32)
    v = (rng.standard_normal((16, 5)) / 3).astype(np.float32)
    x16, w16 = x.astype(np.float16), w.astype(np.float16)
    return {"f": (x, w, True), "f_off": (x, w, False), "f16": (x16, w16, True),
            "g": (x, w, Config(True, -1.5)), "g_off": (x, w, Config(False, 0.5)),
            "h": (x16, w16, True), "h_off": (x, w, False), "l": (x, w, v, True), "l_off": (x, w, v, False)}
