"""A tuple holding a bfloat16 partial sum accumulated in float32, passed to a helper (a literal, or a
name bound to it): the helper cannot name the dtype to cast it back to, so it is completed first."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def use(pair):
    return jnp.tanh(pair[0]) + pair[1]


@mesh(model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["batch", "e"]:
    return use((x @ w, x.sum()))


@mesh(model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["batch", "e"]:
    t = (x @ w, x.sum())
    return use(t)


def _args():
    x = np.ones((2, 8))
    w = np.zeros((8, 4))
    w[0::4], w[1::4] = 256.0, 1.0      # devices 0 and 2: 257, which bfloat16 cannot hold
    w[2::4], w[3::4] = -128.0, -128.0  # devices 1 and 3: -256; the whole sum is 2
    return (x.astype(jnp.bfloat16), w.astype(jnp.bfloat16))


def inputs():
    return {"f": _args(), "g": _args()}
