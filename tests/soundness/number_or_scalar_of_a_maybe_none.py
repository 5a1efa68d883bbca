"""A Python number or a scalar array, as an optional bias's penalty is written: ``extra = 0.0 if bias is None else
jnp.sum(bias) * 0.5`` with ``bias`` set under a flag known only when traced, its sum a partial sum over 'model'
(completed in its arm: a number taken for a partial sum would be counted once per device); a non-zero number
(``1.0 if b is None else jnp.max(b)``, a max over a split dim) used as a scale; flags on and off, float16, a 1x8
mesh. Before: "the branches of this conditional expression have different layouts" (attack of session 34)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


def extras(x, w, flag):
    h = x @ w
    bias = None
    if flag:
        bias = jnp.tanh(h[0] * 0.5)
    extra = 0.0 if bias is None else jnp.sum(bias) * 0.5
    scale = 1.0 if bias is None else jnp.max(bias) + 2.0
    return jnp.mean(h ** 2) * scale + extra


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    return extras(x, w, flag)


@mesh(batch=2, model=4, rules={"e": "model"})
def f_off(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    return extras(x, w, flag)


@mesh(batch=1, model=8, rules={"e": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    out = extras(x, w, flag)
    return out - (2.5 if not flag else jnp.sum(x @ w))


def inputs():
    rng = np.random.default_rng(3401)
    x = rng.standard_normal((4, 5)).astype(np.float32) - 0.5
    w = (rng.standard_normal((5, 16)) / 3).astype(np.float32)
    x16, w16 = x.astype(np.float16), w.astype(np.float16)
    return {"f": (x16, w16, True), "f_off": (x, w, False), "g": (x, w, True)}
