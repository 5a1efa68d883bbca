"""Python's sum() over arrays: a list literal of partial sums (they stay partial: one psum after the
sum), a tuple mixing split and whole terms, start=, a helper's sum([a, b], c), sum() of a list bound
before, and sum() of Python numbers.  In bfloat16 each device's partial product (257 or -256) needs
more bits than bfloat16 has: the psum must add in float32 and cast back, as the single device does."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def combine(a, b, c):
    return sum([a, b], c)


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "h"], v: Tensor["d", "h"], b: Tensor["h"]) -> Tensor["batch", "h"]:
    return sum([x @ w, x @ v]) + combine(x @ w, x @ v * 2, b) + sum([1.0, 2.0])


@mesh(batch=2, model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "h"], v: Tensor["d", "h"], b: Tensor["h"]) -> Tensor["batch", "h"]:
    terms = [x @ w, x @ v]
    h = sum(terms)
    return sum((h, jnp.tanh(h), b), start=h)


def _args(dtype):
    x = np.ones((2, 8))
    w = np.zeros((8, 4))
    w[0::4], w[1::4] = 256.0, 1.0      # devices 0 and 2: 257, which bfloat16 cannot hold
    w[2::4], w[3::4] = -128.0, -128.0  # devices 1 and 3: -256; the whole sum is 2
    v = np.random.default_rng(121).standard_normal((8, 4))
    return tuple(a.astype(dtype) for a in (x, w, v, np.arange(4.0)))


def inputs():
    return {"f": _args(jnp.bfloat16), "g": _args(np.float32)}
