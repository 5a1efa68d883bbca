"""The dtype of a dict's value replaced by a store or ``.update`` (``d["a"] = h``, ``d.update(a=h)``,
``d.update({"a": h @ w})``, ``h`` float32 where the value it replaces was bfloat16), and of ``x @ w * d["n"]``: the
psum completing a partial sum formed from it casts back to the dtype one device gives it.  Before, the value's
dtype was the one it replaced (a bfloat16 result where one device gives float32), and ``x @ w * d["n"]`` was not
cast back at all (a float32 result for bfloat16 operands: the read of ``d["n"]`` hid the float32-formed
``x @ w`` beside it)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2  # (bfloat16)


@mesh(batch=2, model=4, rules={"ff": "model"})
def stored(x: Tensor["batch", "ff"], h: Tensor["batch", "ff"], w: Tensor["ff", "d"]):
    d = {"a": x}
    d["a"] = h
    return d["a"] @ w


@mesh(batch=2, model=4, rules={"ff": "model"})
def updated(x: Tensor["batch", "ff"], h: Tensor["batch", "ff"], w: Tensor["ff", "d"]):
    d = {"a": x, "b": x @ w}
    d.update(a=h)
    d.update({"b": h @ w})
    return d["a"] @ w, d["b"]


@mesh(batch=2, model=4, rules={"ff": "model"})
def scaled(x: Tensor["batch", "ff"], h: Tensor["batch", "ff"], w: Tensor["ff", "d"]):
    d = {"n": 2.0}
    return x @ w * d["n"]


def inputs():
    rng = np.random.default_rng(67)
    x = jnp.asarray(rng.standard_normal((4, 16)), jnp.bfloat16)
    h = rng.standard_normal((4, 16)).astype(np.float32)
    w = jnp.asarray(rng.standard_normal((16, 8)) * 0.3, jnp.bfloat16)
    return {"stored": (x, h, w), "updated": (x, h, w), "scaled": (x, h, w)}
