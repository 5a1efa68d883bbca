# Bad input: a list comprehension over the rows of an array split along its first dim.
# expect: UnsupportedError at 10:28 naming a Python loop over an array split along its first dim
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model", "b"]) -> Tensor["model", "b"]:
    rows = [r * 2 for r in x]
    return x
