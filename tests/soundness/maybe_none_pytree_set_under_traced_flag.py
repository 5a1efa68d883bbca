"""A tuple (or a dict) or None known only when traced: ``extra = None`` then ``if flag: extra = (jnp.tanh(x @ w),
x)``, and ``aux = {"m": ...} if flag else None``; ``if extra is not None:`` / ``if aux is None:`` then keep both
branches.  Flag on (2x4) and off (1x8, and 2x4 in float16), gradients.  Before: after the ``if``, ``extra`` was taken
for the tuple, so ``'extra is not None' is True in this version`` left the else branch unrewritten, and with the
flag off it ran a local ``jnp.mean(y)`` of a split ``y``: wrong numbers, silent (``f_off``); the dict's
conditional expression was refused ("the branches of this conditional expression have different layouts")."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


def body(x, w, flag):
    extra = None
    if flag:
        extra = (jnp.tanh(x @ w), x)
    aux = {"m": jnp.tanh(x @ w) * 0.5} if flag else None
    y = jnp.tanh(x @ w)
    if extra is not None:
        y = y + extra[0]
    else:
        y = y - jnp.mean(y)
    if aux is None:
        y = y * 2.0
    else:
        y = y + aux["m"]
    return y


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    return body(x, w, flag)


@mesh(batch=1, model=8, rules={"e": "model"})
def f_off(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    extra = None
    if flag:
        extra = (jnp.tanh(x @ w), x)
    y = jnp.tanh(x @ w)
    if extra is not None:
        y = y + extra[0]
    else:
        y = y - jnp.mean(y)
    return y


@mesh(batch=2, model=4, rules={"e": "model"})
def g_off(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    return body(x, w, flag)


def inputs():
    rng = np.random.default_rng(1501)
    x = rng.standard_normal((4, 5)).astype(np.float32) - 0.5
    w = (rng.standard_normal((5, 16)) / 3).astype(np.float32)
    return {"f": (x, w, True), "f_off": (x, w, False), "g_off": (x.astype(np.float16), w.astype(np.float16), False)}
