"""A tuple whose item is a partial sum after one branch of an if on a flag known only when traced and whole after the
other: ``t = (h @ v, x)`` or ``t = (x, h @ v)`` (each item completed at the end of the branch that leaves it
partial: ``t = (mr.psum(t[0], ...), t[1])``), a helper's returned tuple (``t = split(h, v)`` or ``t = plain(h,
x)``, the branch chosen by ``x.shape[0] > 4``), float32 and bfloat16 (the psum casts back to the operands' dtype).
Before: refused ("'t' holds other items after each branch, of different layouts")."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 3e-2


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], flag):
    h = jnp.tanh(x @ w)
    if flag:
        t = (h @ v, x)
    else:
        t = (x, h @ v)
    a, b = t
    return a * 2.0 + jnp.sin(b)


@mesh(batch=2, model=4, rules={"e": "model"})
def f_on(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], flag):
    h = jnp.tanh(x @ w)
    if flag:
        t = (h @ v, x)
    else:
        t = (x, h @ v)
    a, b = t
    return a * 2.0 + jnp.sin(b)


def split(h, v):
    return h @ v, jnp.tanh(h)


def plain(h, x):
    return x * 2.0, h


@mesh(batch=2, model=4, rules={"e": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"]):
    h = jnp.tanh(x @ w)
    if x.shape[0] > 4:
        t = split(h, v)
    else:
        t = plain(h, x)
    a, b = t
    return jnp.sin(a), b * 3.0


@mesh(batch=2, model=4, rules={"e": "model"})
def g_big(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"]):
    h = jnp.tanh(x @ w)
    if x.shape[0] > 4:
        t = split(h, v)
    else:
        t = plain(h, x)
    a, b = t
    return jnp.sin(a), b * 3.0


def inputs():
    rng = np.random.default_rng(3507)
    x = rng.standard_normal((8, 5)).astype(np.float32)
    w = (rng.standard_normal((5, 16)) / 2).astype(np.float32)
    v = (rng.standard_normal((16, 5)) / 4).astype(np.float32)
    x16, w16, v16 = (a.astype(jnp.bfloat16) for a in (x, w, v))
    return {"f": (x, w, v, False), "f_on": (x16, w16, v16, True), "g": (x[:4], w, v), "g_big": (x16, w16, v16)}
