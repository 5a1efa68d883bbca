# Bad input: a tuple return hint of 2 values for a return of 3.
# expect: LayoutError at 10:12 naming tuple of 2
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model"]) -> tuple[Tensor["model"], Tensor["model"]]:
    return x, x, x
