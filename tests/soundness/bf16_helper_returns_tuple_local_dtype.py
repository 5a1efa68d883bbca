"""A helper returning a tuple whose partial sum's dtype the caller cannot name (the helper rebinds its
parameter, so the dtype is read inside it; or it returns a name bound to the tuple): the item is
completed inside the helper, in bfloat16."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def rebound(x, w):
    x = x * 1.0
    return x @ w, x


def named(x, w):
    t = (x @ w, x)
    return t


@mesh(model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["batch", "e"]:
    y, _ = rebound(x, w)
    return jnp.tanh(y)


@mesh(model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["batch", "e"]:
    y, _ = named(x, w)
    return jnp.tanh(y)


def _args():
    x = np.ones((2, 8))
    w = np.zeros((8, 4))
    w[0::4], w[1::4] = 256.0, 1.0      # devices 0 and 2: 257, which bfloat16 cannot hold
    w[2::4], w[3::4] = -128.0, -128.0  # devices 1 and 3: -256; the whole sum is 2
    return (x.astype(jnp.bfloat16), w.astype(jnp.bfloat16))


def inputs():
    return {"f": _args(), "g": _args()}
