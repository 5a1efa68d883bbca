# Bad input: a while statement.
# expect: UnsupportedError at 10:5 naming 'while' statements
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    while False:
        x = x * 2
    return x
