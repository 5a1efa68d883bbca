# Bad input: a statement after return.
# expect: UnsupportedError at 11:5 naming code after a return
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model"]) -> Tensor["model"]:
    return x
    x = x * 2
