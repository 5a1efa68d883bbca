"""A scan body (a module helper, a nested def) returning (carry, y) where y is a bfloat16 partial sum
over split d accumulated in float32: the caller cannot name its dtype, so it is completed inside the
body and cast back to bfloat16 there."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def body(h, w):
    return h, h @ w


@mesh(model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["layer", "d", "e"]) -> Tensor["layer", "batch", "e"]:
    _, ys = jax.lax.scan(body, x, w)
    return ys


@mesh(model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["layer", "d", "e"]) -> Tensor["layer", "batch", "e"]:
    def step(h, wl):
        return h * 0.5, h @ wl

    _, ys = jax.lax.scan(step, x, w)
    return ys


def inputs():
    x, w = _args()
    return {"f": (x, jnp.stack([w, w])), "g": (x, jnp.stack([w, w * 0.5]))}


def _args():
    x = np.ones((2, 8))
    w = np.zeros((8, 4))
    w[0::4], w[1::4] = 256.0, 1.0      # devices 0 and 2: 257, which bfloat16 cannot hold
    w[2::4], w[3::4] = -128.0, -128.0  # devices 1 and 3: -256; the whole sum is 2
    return (x.astype(jnp.bfloat16), w.astype(jnp.bfloat16))

