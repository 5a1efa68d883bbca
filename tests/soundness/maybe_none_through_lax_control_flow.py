"""An array or None known only when traced (``m = jnp.sum(x @ w, ...) if flag else None``, a partial sum) through
``jax.lax.cond``/``switch``/``scan``/``fori_loop``: read by a branch or body (closed over, passed as an operand,
carried), and returned by one (a cond branch's ``(h * 2.0, b)``, a scan's ``y``, the carry).  What comes out of the
call is an array or None where what went in (or what the body returns) is, so that a later ``if b2 is None:`` keeps
both branches.  Each body runs with the flag on and off (``*_off``), on 2x4 and 1x8, float32 and float16,
gradients of each.  Before: the mark was dropped at the call (a cond's result is the branches' common layout, a
scan's ``ys`` is stacked anew, a lambda's partial sum completed anew), so ``if b2 is not None:`` was taken for True
("only this branch runs") and the else branch ran unrewritten when the flag was off: a local mean, wrong numbers
(``c1_off``, ``fo_off``)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2

def cond_returns(x, w, flag):
    b = jnp.sum(x @ w, axis=0) if flag else None
    h = x @ w
    out, b2 = jax.lax.cond(jnp.sum(x) > 0, lambda h: (h * 2.0, b), lambda h: (h - 1.0, b), h)
    if b2 is not None:
        out = out + b2
    else:
        out = out - jnp.mean(out)
    return out


def scan_ys(x, w, flag):
    m = jnp.mean(x @ w, axis=0) if flag else None
    def step(c, xt):
        c = jnp.tanh(c + xt)
        return c, m
    c, ms = jax.lax.scan(step, jnp.zeros((w.shape[1],), x.dtype), x @ w)
    if ms is not None:
        c = c + jnp.sum(ms, axis=0)
    else:
        c = c - jnp.mean(c)
    return c


def scan_carry(x, w, flag):
    m = jnp.mean(x @ w, axis=0) if flag else None
    def step(carry, xt):
        c, m = carry
        c = jnp.tanh(c + xt)
        if m is not None:
            c = c + m
            m = m * 0.5
        return (c, m), c
    (c, m), ys = jax.lax.scan(step, (jnp.zeros((w.shape[1],), x.dtype), m), x @ w)
    if m is None:
        c = c / jnp.sum(c)
    return c, ys


@mesh(batch=2, model=4, rules={"e": "model"})
def c1(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    return cond_returns(x, w, flag)


@mesh(batch=2, model=4, rules={"e": "model"})
def c1_off(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    return cond_returns(x, w, flag)


@mesh(batch=1, model=8, rules={"e": "model"})
def s1(x: Tensor["seq", "d"], w: Tensor["d", "e"], flag):
    return scan_ys(x, w, flag)


@mesh(batch=1, model=8, rules={"e": "model"})
def s1_off(x: Tensor["seq", "d"], w: Tensor["d", "e"], flag):
    return scan_ys(x, w, flag)


@mesh(batch=1, model=8, rules={"e": "model"})
def s2(x: Tensor["seq", "d"], w: Tensor["d", "e"], flag):
    return scan_carry(x, w, flag)


@mesh(batch=1, model=8, rules={"e": "model"})
def s2_off(x: Tensor["seq", "d"], w: Tensor["d", "e"], flag):
    return scan_carry(x, w, flag)


def scan_partial_carry(x, w, flag):
    m = jnp.sum(x @ w, axis=(0, 1)) if flag else None   # partial over batch, maybe None
    def step(carry, xt):
        c, m = carry
        h = jnp.tanh(xt @ w)
        if m is not None:
            h = h + m
            m = m * 0.5
        return (c + jnp.sum(h, axis=0), m), h
    (c, m), hs = jax.lax.scan(step, (jnp.zeros((w.shape[1],), x.dtype), m), x)
    if m is None:
        return c, hs - jnp.mean(hs)
    return c + m, hs


def switch_maybe(x, w, k, flag):
    b = jnp.mean(x @ w, axis=0) if flag else None
    def one(h, b):
        return h * 2.0 if b is None else h + b
    def two(h, b):
        return h - 1.0 if b is None else h * b
    out = jax.lax.switch(k, [one, two, lambda h, b: jnp.tanh(h)], x @ w, b)
    return out


def fori_maybe_carry(x, w, flag):
    m = jnp.sum(x @ w, axis=0) if flag else None
    def body(i, carry):
        h, m = carry
        h = jnp.tanh(h)
        if m is not None:
            h = h + m
        return h, m
    h, m = jax.lax.fori_loop(0, 3, body, (x @ w, m))
    if m is None:
        h = h - jnp.mean(h)
    return h


@mesh(batch=2, model=4, rules={"e": "model"})
def s3(x: Tensor["seq", "batch", "d"], w: Tensor["d", "e"], flag):
    return scan_partial_carry(x, w, flag)


@mesh(batch=2, model=4, rules={"e": "model"})
def s3_off(x: Tensor["seq", "batch", "d"], w: Tensor["d", "e"], flag):
    return scan_partial_carry(x, w, flag)


@mesh(batch=2, model=4, rules={"e": "model"})
def sw(x: Tensor["batch", "d"], w: Tensor["d", "e"], k: Tensor[()], flag):
    return switch_maybe(x, w, k, flag)


@mesh(batch=1, model=8, rules={"e": "model"})
def sw_off(x: Tensor["batch", "d"], w: Tensor["d", "e"], k: Tensor[()], flag):
    return switch_maybe(x, w, k, flag)


@mesh(batch=2, model=4, rules={"e": "model"})
def fo(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    return fori_maybe_carry(x, w, flag)


@mesh(batch=2, model=4, rules={"e": "model"})
def fo_off(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    return fori_maybe_carry(x, w, flag)


def inputs():
    rng = np.random.default_rng(1503)
    xs = rng.standard_normal((3, 4, 5)).astype(np.float32) - 0.2
    x = rng.standard_normal((4, 5)).astype(np.float32) + 0.3
    w = (rng.standard_normal((5, 16)) / 3).astype(np.float32)
    x16, w16 = x.astype(np.float16), w.astype(np.float16)
    return {"c1": (x, w, True), "c1_off": (x16, w16, False), "s1": (x, w, True), "s1_off": (x, w, False),
            "s2": (x, w, True), "s2_off": (x, w, False),
            "s3": (xs, w, True), "s3_off": (xs.astype(np.float16), w16, False),
            "sw": (x, w, np.int32(1), True), "sw_off": (x, w, np.int32(0), False),
            "fo": (x16, w16, True), "fo_off": (x, w, False)}
