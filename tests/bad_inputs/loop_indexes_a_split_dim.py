# Bad input: a Python loop indexing rows of a split dim.
# expect: UnsupportedError at 10:15 naming indexing split dim 'batch'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=4)
def f(x: Tensor["batch", "d"]) -> Tensor["d"]:
    total = x[0] * 0
    for i in range(x.shape[0]):
        total = total + x[i]
    return total
