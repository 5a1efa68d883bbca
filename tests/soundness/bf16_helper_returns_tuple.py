"""A bfloat16 helper returning a tuple (fuzz mismatch_2cfe245b): its second item is a partial sum over
split d accumulated in float32; the caller unpacks the tuple (and, in g, indexes the call) and completes
the partial sum later.  The psum must cast it back to bfloat16 (the single-device dtype) after adding in
float32: each device's partial product needs more bits than bfloat16 has."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def project(x, w):
    h = x * 2.0
    return h, x @ w


@mesh(model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["batch", "e"]:
    h, y = project(x, w)
    return jnp.tanh(y) + h.sum()


@mesh(model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["batch", "e"]:
    y = project(x, w)[1]
    return y * 2.0


def _args():
    x = np.ones((2, 8))
    w = np.zeros((8, 4))
    w[0::4], w[1::4] = 256.0, 1.0      # devices 0 and 2: 257, which bfloat16 cannot hold
    w[2::4], w[3::4] = -128.0, -128.0  # devices 1 and 3: -256; the whole sum is 2
    return (x.astype(jnp.bfloat16), w.astype(jnp.bfloat16))


def inputs():
    return {"f": _args(), "g": _args()}
