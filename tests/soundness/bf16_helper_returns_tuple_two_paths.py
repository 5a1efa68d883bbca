"""A helper returning a tuple on two paths (a static flag), one item a bfloat16 partial sum accumulated
in float32 on both: the caller's psum casts it back whichever path ran."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def project(x, w, twice):
    if twice:
        return x @ (w * 2.0), x
    return x @ w, x


@mesh(model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], twice: bool = False) -> Tensor["batch", "e"]:
    y, _ = project(x, w, twice)
    return jnp.tanh(y)


def _args():
    x = np.ones((2, 8))
    w = np.zeros((8, 4))
    w[0::4], w[1::4] = 256.0, 1.0      # devices 0 and 2: 257, which bfloat16 cannot hold
    w[2::4], w[3::4] = -128.0, -128.0  # devices 1 and 3: -256; the whole sum is 2
    return (x.astype(jnp.bfloat16), w.astype(jnp.bfloat16))


def inputs():
    return _args()
