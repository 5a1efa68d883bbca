"""An array or None known only when traced (a partial sum or None) closed over by a ``jax.lax.while_loop`` body
(``jnp.tanh(h) if m is None else jnp.tanh(h) + m``), flag on (2x4) and off (1x8); no gradients (JAX has no
reverse mode for while_loop)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


GRAD = False


def while_maybe(x, w, flag):
    m = jnp.sum(x @ w, axis=0) if flag else None
    def cond(carry):
        return carry[0] < 3
    def body(carry):
        i, h = carry
        h = jnp.tanh(h) if m is None else jnp.tanh(h) + m
        return i + 1, h
    _, h = jax.lax.while_loop(cond, body, (0, x @ w))
    return h


@mesh(batch=2, model=4, rules={"e": "model"})
def wh(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    return while_maybe(x, w, flag)


@mesh(batch=1, model=8, rules={"e": "model"})
def wh_off(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    return while_maybe(x, w, flag)


def inputs():
    rng = np.random.default_rng(1503)
    x = rng.standard_normal((4, 5)).astype(np.float32) + 0.3
    w = (rng.standard_normal((5, 16)) / 3).astype(np.float32)
    return {"wh": (x, w, True), "wh_off": (x, w, False)}
