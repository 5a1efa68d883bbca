"""A float16 helper returning a tuple whose first item is a partial sum over split d: each device's
partial sum (+-40000) overflows float16's 65504 when formed in float16 pairs, and the whole is small.
The caller's psum must add in float32 and cast back to float16."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def both(x, w):
    return x @ w, x.sum()


@mesh(model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["batch", "e"]:
    y, s = both(x, w)
    return y / 64.0 + s


def inputs():
    x = np.ones((2, 8))
    w = np.zeros((8, 4))
    w[0:2], w[2:4], w[4:6], w[6:8] = 40000.0, -40000.0, 40000.0, -39999.0
    return (x.astype(jnp.float16), (w / 1.0).astype(jnp.float16))
