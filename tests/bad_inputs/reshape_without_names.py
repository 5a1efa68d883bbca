# Bad input: a reshape of a split value with no names for the new dims.
# expect: UnsupportedError at 10:9 naming without names
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    y = x.reshape(-1)
    return x
