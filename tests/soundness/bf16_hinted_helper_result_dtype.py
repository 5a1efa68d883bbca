"""A helper with a return hint gives a float32 result; the caller multiplies it with a bfloat16
partial sum (formed in float32).  On one device the product promotes to float32, so the psum that
completes it must not cast it back to bfloat16: the hinted helper's result dtype counts (it was
taken for a weakly typed Python scalar).  In g the partial sum's shape and dtype fill a
full_like (bfloat16 on one device, not the float32 it is accumulated in)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def scale(s: Tensor["batch"]) -> Tensor["batch"]:
    return jnp.tanh(s) + 1.0


@mesh(model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], s: Tensor["batch"]) -> Tensor["batch", "e"]:
    y = (x @ w) * scale(s)[:, None]
    return jnp.tanh(y)


@mesh(model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"], s: Tensor["batch"]) -> Tensor["batch", "e"]:
    y = x @ w
    return jnp.full_like(y, 2.0) * scale(s)[:, None]


def _args():
    x = np.ones((2, 8))
    w = np.zeros((8, 4))
    w[0::4], w[1::4] = 256.0, 1.0
    w[2::4], w[3::4] = -128.0, -128.0
    s = np.array([0.25, -0.5])
    return (x.astype(jnp.bfloat16), w.astype(jnp.bfloat16), s.astype(np.float32))


def inputs():
    return {"f": _args(), "g": _args()}
