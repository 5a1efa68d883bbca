"""Functions passed to helpers in float16, where a partial sum is accumulated in float32: a nested def
(``residual(x, block)``), a lambda and a module def, each returning a matmul's partial sum to the helper
that adds it.  The nested def is rewritten where it was defined and completes its float32 partial sum
(cast back) before returning, since the helper cannot name its dtype; before it returned float32 and
the result was float32 where the reference's is float16.  ``g``: the helper forms the partial sum and
passes it to the def or lambda, which cannot name its dtype: it is completed in the helper first."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def residual(x, fn):
    return x + fn(x)


def mlp(x, w1, w2):
    return jax.nn.relu(x @ w1) @ w2


def block_def(y, w1, w2):
    return mlp(y, w1, w2)


def residual3(x, fn, w1, w2):
    return x + fn(x, w1, w2)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    def block(y):
        return mlp(y, w1, w2)

    h = residual(x, block)
    h = residual(h, lambda y: mlp(y, w1, w2))
    return residual3(h, block_def, w1, w2)


def apply(x, w, fn):
    h = x @ w  # a float32-accumulated partial sum formed in the helper, passed to fn
    return fn(h) + 1.0


@mesh(batch=2, model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]) -> Tensor["batch", "d_ff"]:
    def squash(y):
        return jnp.tanh(y) * 0.5

    return apply(x, w, squash) + apply(x * 2.0, w, lambda t: jnp.sin(t))


def inputs():
    rng = np.random.default_rng(175)
    x, w1 = rng.standard_normal((4, 8)).astype(np.float16), (rng.standard_normal((8, 16)) * 0.3).astype(np.float16)
    return {"f": (x, w1, (rng.standard_normal((16, 8)) * 0.3).astype(np.float16)), "g": (x, w1)}
