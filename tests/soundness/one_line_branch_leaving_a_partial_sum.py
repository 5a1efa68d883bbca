"""A partial sum (``x @ w``, the contraction dim 'd' split over 'model') assigned in a one-line body of an if on a flag
known only when traced, the other branch leaving the name whole: ``if flag: t = x @ w`` with no else (completed in an
else meshify adds), ``if flag: t = <whole>`` / ``else: t = x @ w`` and the reverse order, and a tuple whose item is a
partial sum in one one-line branch and whole in the other (``if flag: t = (h @ v, x)`` / ``else: t = (x, h @ v)``,
was tests/bad_inputs/branch_tuple_item_partial_sum_in_one.py).  Each one-line body becomes a block ending in the
psum.  Before: refused ("'t' has layout [batch/'batch', e] partial over 'model' after one branch and [batch, e] after
the other"): the one-line bodies were left out of the join that indented ones had."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], u: Tensor["batch", "e"], flag):
    t = u
    if flag: t = x @ w
    return jnp.sin(t)


@mesh(batch=2, model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    if flag: t = jnp.tanh(x[:, :4].sum(-1, keepdims=True)) * jnp.ones((x.shape[0], w.shape[1]))
    else: t = x @ w
    return jnp.sin(t)


@mesh(batch=2, model=4, rules={"d": "model"})
def k(x: Tensor["batch", "d"], w: Tensor["d", "e"], u: Tensor["batch", "e"], flag):
    if flag: t = x @ w
    else: t = u * 2.0
    return jnp.sin(t)


@mesh(batch=2, model=4, rules={"e": "model"})
def tup(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], flag):
    h = jnp.tanh(x @ w)
    if flag: t = (h @ v, x)
    else: t = (x, h @ v)
    a, b = t
    return a * 2.0 + jnp.sin(b)


@mesh(batch=2, model=4, rules={"e": "model"})
def tup_on(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], flag):
    h = jnp.tanh(x @ w)
    if flag: t = (h @ v, x)
    else: t = (x, h @ v)
    a, b = t
    return a * 2.0 + jnp.sin(b)


def inputs():
    rng = np.random.default_rng(3601)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    w = (rng.standard_normal((16, 5)) / 2).astype(np.float32)
    u = rng.standard_normal((8, 5)).astype(np.float32)
    x5 = x[:, :5]
    w2 = (rng.standard_normal((5, 16)) / 2).astype(np.float32)
    v = (rng.standard_normal((16, 5)) / 4).astype(np.float32)
    return {"f": (x, w, u, True), "g": (x, w, False), "k": (x, w, u, True), "tup": (x5, w2, v, False),
            "tup_on": (x5, w2, v, True)}
