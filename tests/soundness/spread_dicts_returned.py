"""Dicts with spreads returned (``{**m, "t": jnp.mean(x)}``, ``{**{"s": a, "u": x}, "t": b}``, ``{"t": x, **m}``, a key
given again after a spread) from a ``@mesh`` function or a helper, holding partial sums: read by key, each completed
in its own dtype (float16 too).  They were refused ("cannot tell the dtype of '{**m, ...}'", the fuzz found it
unprovoked at seed 4105) or crashed inside meshify (AssertionError: the entries were paired with the fields by
position, which a spread shifts)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

@mesh(batch=2, model=4, rules={"d": "model"})
def a1(x: Tensor["batch", "d"]):
    m = {"s": jnp.sum(x), "q": jnp.sum(x * x)}
    return {**m, "t": jnp.mean(x)}

@mesh(batch=2, model=4, rules={"d": "model"})
def a2(x: Tensor["batch", "d"]):
    return {**{"s": jnp.sum(x), "u": x * 2}, "t": jnp.sum(x * 3)}

@mesh(batch=2, model=4, rules={"d": "model"})
def a3(x: Tensor["batch", "d"]):
    return {**{"s": jnp.sum(x)}, "s": x * 2.0}

@mesh(batch=2, model=4, rules={"d": "model"})
def a4(x: Tensor["batch", "d"]):
    m = {"s": jnp.sum(x)}
    return {"t": x, **m}

def helper(x):
    return {**{"s": jnp.sum(x)}, "t": jnp.sum(x * x)}

@mesh(batch=2, model=4, rules={"d": "model"})
def a5(x: Tensor["batch", "d"]):
    r = helper(x)
    return r["s"] * 2, r

@mesh(batch=2, model=4, rules={"d": "model"})
def a7(x: Tensor["batch", "d"]):
    m = {"s": x}
    return {**m, "s": jnp.sum(x)}


def inputs():
    x = np.random.default_rng(99).standard_normal((4, 16)).astype(np.float32)
    h = x.astype(np.float16)
    return {"a1": (h,), "a2": (x,), "a3": (h,), "a4": (x,), "a5": (h,), "a7": (x,)}
