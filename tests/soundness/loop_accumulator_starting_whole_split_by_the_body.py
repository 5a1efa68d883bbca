"""A loop accumulator that starts as an array of literal shape (``acc = jnp.zeros((4, 24))``) and which the
body splits (it meets a split dim): it is cut to its block once before the loop.  The cut was put inside
the body, so from the second iteration it cut an already-local block (a misleading size error at the call).
Its entries are checked against the call's sizes.  (Lined up with a dim the
function makes itself, a split's sections, it is refused at the call: nothing tells that dim's size.)  Also an
accumulator of partial sums (``acc + t @ w2``) and one on float16 operands."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"qkv": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "qkv"], w2: Tensor["sec", "d"]):
    acc = jnp.zeros((4, 24))
    for i in range(3):
        acc = acc + jnp.tanh(x @ w) * i
    out = jnp.ones((4, 8))
    for t in jnp.split(x @ w, 3, axis=-1):
        out = out * 0.5 + t @ w2
    return acc, out


@mesh(batch=2, model=4, rules={"qkv": "model"})
def h(x: Tensor["batch", "d"], w: Tensor["d", "qkv"]):
    acc = jnp.zeros((4, 24), jnp.float16)
    for t in range(2):
        acc = acc + x @ w
    return acc


def inputs():
    rng = np.random.default_rng(418)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((8, 24)).astype(np.float32) * 0.4
    w2 = rng.standard_normal((8, 8)).astype(np.float32) * 0.4
    return {"f": (x, w, w2), "h": (x.astype(np.float16), w.astype(np.float16))}
