"""Tuples of one length the branches of an if on a flag known only when traced leave with other items, merged item
by item: ``t = (h, x * 2.0)`` or ``t = (jnp.sin(h), x)`` (each position of one layout, different from the other
position's); ``t = (h, None)`` then ``t = (h * 2.0, h @ v)`` under the flag (an item a partial sum or None); the
fix the refusal of a partial sum in one branch only names (each bound to a hinted name first); a helper whose tuple
differs by a literal flag its callers pass (the branch Python takes). Flags on and off. Before: refused ("'t' holds
other items after each branch, of different layouts"): the items were merged as one list of one layout."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], flag):
    h = jnp.tanh(x @ w)
    if flag:
        t = (h, x * 2.0)
    else:
        t = (jnp.sin(h), x)
    return jnp.sum(t[0]) + jnp.sum(t[1] ** 2)


@mesh(batch=2, model=4, rules={"e": "model"})
def f_on(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], flag):
    h = jnp.tanh(x @ w)
    if flag:
        t = (h, x * 2.0)
    else:
        t = (jnp.sin(h), x)
    a, b = t
    return a * 3.0, jnp.cos(b)


@mesh(batch=2, model=4, rules={"e": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], flag):
    h = jnp.tanh(x @ w)
    t = (h, None)
    if flag:
        t = (h * 2.0, h @ v)
    s, extra = t
    if extra is not None:
        return jnp.sum(s) + jnp.sum(jnp.tanh(extra))
    return jnp.sum(s)


@mesh(batch=2, model=4, rules={"e": "model"})
def hinted(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], flag):
    h = jnp.tanh(x @ w)
    if flag:
        a: Tensor["batch", "d"] = h @ v
        t = (a, x)
    else:
        b: Tensor["batch", "d"] = h @ v
        t = (x, b)
    a, b = t
    return a * 2.0 + jnp.sin(b)


def pair(h, x, v, first):
    if first:
        t = (h @ v, x)
    else:
        t = (x, jnp.tanh(h))
    return t


@mesh(batch=2, model=4, rules={"e": "model"})
def helper(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], flag):
    h = jnp.tanh(x @ w)
    a, b = pair(h, x, v, True)
    c, d = pair(h, x, v, False)
    return jnp.sum(jnp.sin(a)) + jnp.sum(b) + jnp.sum(c * 2.0) + jnp.sum(d ** 2)


def inputs():
    rng = np.random.default_rng(3504)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    w = (rng.standard_normal((5, 16)) / 2).astype(np.float32)
    v = (rng.standard_normal((16, 5)) / 4).astype(np.float32)
    return {"f": (x, w, v, False), "f_on": (x, w, v, True), "g": (x, w, v, True), "hinted": (x, w, v, False),
            "helper": (x, w, v, False)}
