"""``d = {"m": x @ w} if flag else None`` (a partial sum inside a dict display in one arm of a conditional
expression, None in the other), its value read under ``if d is not None:``; a helper returning ``{"m": x @ w, "n":
...} if flag else None``; bfloat16 (the partial sum formed in float32, cast back where completed) and float32,
flags on and off. Before: "cannot tell the dtype of 'jnp.sum(d["m"])'" where the flag was on, and the helper's
return refused ("a dict holding a partial sum whose operands' dtype meshify cannot read here")."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


def aux_of(x, w, flag):
    return {"m": x @ w, "n": jnp.tanh(x)} if flag else None


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    d = {"m": x @ w} if flag else None
    out = jnp.tanh(x)
    if d is not None:
        out = out * jnp.sum(d["m"])
    return out


@mesh(batch=2, model=4, rules={"d": "model"})
def f_off(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    d = {"m": x @ w} if flag else None
    out = jnp.tanh(x)
    if d is not None:
        out = out * jnp.sum(d["m"])
    return out


@mesh(batch=2, model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    d = aux_of(x, w, flag)
    out = jnp.tanh(x @ w)
    if d is not None:
        out = out + d["m"] * 0.5 + jnp.mean(d["n"])
    return out


@mesh(batch=2, model=4, rules={"d": "model"})
def g32(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    d = aux_of(x, w, flag)
    out = jnp.tanh(x @ w)
    if d is not None:
        out = out + d["m"] * 0.5 + jnp.mean(d["n"])
    return out


def inputs():
    rng = np.random.default_rng(3505)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    w = (rng.standard_normal((16, 5)) / 4).astype(np.float32)
    x16, w16 = x.astype(jnp.bfloat16), w.astype(jnp.bfloat16)
    return {"f": (x16, w16, True), "f_off": (x16, w16, False), "g": (x16, w16, True), "g32": (x, w, False)}
