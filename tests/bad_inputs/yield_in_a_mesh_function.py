# Bad input: a generator @mesh function.
# expect: UnsupportedError at 10:5 naming Yield over array
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model"]) -> Tensor["model"]:
    yield x
    return x
