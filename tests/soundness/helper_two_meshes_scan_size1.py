"""One scan helper called from a @mesh function whose 'layer' rule names a mesh axis of size 1
(model=1: it splits nothing) and from another on a 2x4 mesh splitting 'd'."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def stack(x, w):
    h, _ = jax.lax.scan(lambda h, wl: (jnp.tanh(h @ wl), None), x, w)
    return h.mean(axis=0)

@mesh(data=8, model=1, rules={"layer": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["layer", "d", "d"]) -> Tensor["d"]:
    return stack(x, w)

@mesh(data=2, model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["layer", "d", "d"]) -> Tensor["d"]:
    return stack(x, w)
def inputs():
    r = np.random.default_rng(0)
    a = (r.standard_normal((8, 4)).astype(np.float32), (0.4 * r.standard_normal((3, 4, 4))).astype(np.float32))
    return {"f": a, "g": a}
