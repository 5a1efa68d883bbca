# Bad input: a list comprehension over an array.
# expect: UnsupportedError at 10:12 naming ListComp over array 'x'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    rows = [r * 2 for r in x]
    return x
