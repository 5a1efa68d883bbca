"""A nested def returning a tuple whose item is a bfloat16 partial sum over split d (accumulated in
float32): the enclosing function unpacks it and completes the sum, which must come back in bfloat16;
in g the nested def reads such an item of a tuple the enclosing function holds."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["batch", "e"]:
    def project(a):
        return a @ w, a.sum()

    y, s = project(x)
    return jnp.tanh(y) * s


def _args():
    x = np.ones((2, 8))
    w = np.zeros((8, 4))
    w[0::4], w[1::4] = 256.0, 1.0      # devices 0 and 2: 257, which bfloat16 cannot hold
    w[2::4], w[3::4] = -128.0, -128.0  # devices 1 and 3: -256; the whole sum is 2
    return (x.astype(jnp.bfloat16), w.astype(jnp.bfloat16))


@mesh(model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["batch", "e"]:
    t = (x @ w, x.sum())

    def finish(scale):
        return jnp.tanh(t[0]) * scale + t[1]

    return finish(2.0)


def inputs():
    return {"f": _args(), "g": _args()}
