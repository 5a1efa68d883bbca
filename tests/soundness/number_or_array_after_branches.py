"""A Python number after one branch of an if on a flag known only when traced and an array meshify cannot name the
dims of after the other (``s = 2.0`` or ``s = jnp.linspace(0.0, 1.0, 16)``), then multiplied into a value split
over 'model': refused, naming both. Before: the first branch's value was kept, so the generated code either
multiplied the whole (16,) array into a (2, 4) block or sliced the number as an array (raw JAX errors)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    if flag:
        s = 2.0
    else:
        s = jnp.linspace(0.0, 1.0, 16)
    return jnp.tanh(x @ w) * s


def inputs():
    rng = np.random.default_rng(3502)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    w = rng.standard_normal((5, 16)).astype(np.float32)
    return (x, w, False)
