"""Helpers taking ``*args`` and ``**kwargs``, as model code writes them: keyword arguments passed on
(``block(h, w1, w2, act=jax.nn.gelu, bias=b)`` forwarding ``**kw`` to ``dense``), an array among them
(a split bias), ``*xs`` summed in a Python loop over ``xs[1:]`` and counted with ``len(xs)``, a star
parameter left empty, ``kwargs.get("act", jax.nn.gelu)``.  Each call is specialised for what it passes; the calls inside spell the
items out (``dense(h, w, act=kw["act"])``).  Before, "calling block(), which takes *args/**kwargs"."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def dense(h, w, *, act=None, bias=None):
    y = h @ w
    if bias is not None:
        y = y + bias
    return act(y) if act is not None else y


def block(h, w1, w2, **kw):
    return h + dense(dense(h, w1, **kw), w2)


def mean_of(*xs):
    total = xs[0]
    for t in xs[1:]:
        total = total + t
    return total / len(xs)


def scaled(x, *rest, scale=2.0):
    return x * scale


def dense_get(h, w, **kwargs):
    act = kwargs.get("act", jax.nn.gelu)
    return act(h @ w) * kwargs.get("scale", 1.0)


@mesh(data=2, model=4, rules={"batch": "data", "d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"], b: Tensor["d_ff"]):
    h = block(x, w1, w2, act=jax.nn.gelu, bias=b)
    h = block(h, w1, w2)
    h = mean_of(h, x, jnp.tanh(x))
    g = dense_get(h, w1) + dense_get(h, w1, act=jnp.tanh, scale=0.5)
    return jnp.mean(scaled(h) ** 2) + jnp.mean(scaled(x, h, scale=0.5)) + jnp.mean(g ** 2)


def inputs():
    rng = np.random.default_rng(44)
    return (rng.standard_normal((8, 6)).astype(np.float32), 0.4 * rng.standard_normal((6, 16)).astype(np.float32),
            0.4 * rng.standard_normal((16, 6)).astype(np.float32), 0.1 * rng.standard_normal(16).astype(np.float32))
