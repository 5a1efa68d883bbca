"""Arrays meshify cannot name the dims of, of other shapes after each branch of an if on a flag known only when traced
(``s = jnp.ones((1,)) * 3.0`` or ``s = jnp.linspace(0.0, 1.0, 16)``), multiplied into a value split over 'model':
refused (their shape is known only when traced, so which dim each entry lines up with is not). Before: the first
branch's shape was kept, and with the flag off the whole (16,) array met a (2, 4) block (a raw JAX error)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    if flag:
        s = jnp.ones((1,)) * 3.0
    else:
        s = jnp.linspace(0.0, 1.0, 16)
    return jnp.tanh(x @ w) * s


def inputs():
    rng = np.random.default_rng(3508)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    w = rng.standard_normal((5, 16)).astype(np.float32)
    return (x, w, False)
