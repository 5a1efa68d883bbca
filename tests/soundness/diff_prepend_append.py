"""``jnp.diff`` with ``prepend=`` / ``append=`` along an unsplit dim: a number (joined to every device's rows),
a slice of the value itself (``append=h[:, -1:]``, split as h is on its other dims), ``n=2``, and of a partial
sum (completed first: each device's constant end would otherwise be summed).  Before, refused as parameters
meshify did not model (found by the second attack of session 16); gradients through all."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "seq", "d"], w: Tensor["d", "d_ff"]):
    h = x @ w
    a = jnp.diff(h, axis=1, prepend=0.0)
    b = jnp.diff(h, n=2, axis=1, append=h[:, -1:])
    c = jnp.diff(jnp.sum(x, axis=0), axis=0, prepend=1.0, append=-1.0)
    return a, b * 0.5, c


def inputs():
    rng = np.random.default_rng(410)
    return rng.standard_normal((4, 6, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32) * 0.4
