# Bad input: assigning into x[0].
# expect: UnsupportedError at 10:5 naming assignment to 'x[0]'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    x[0] = 1.0
    return x
