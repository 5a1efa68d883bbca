# Bad input: an assignment expression over an array.
# expect: UnsupportedError at 10:13 naming NamedExpr over array
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model"]) -> Tensor["model"]:
    return (y := x * 2)
