# Bad input: unpacking 2 sections into 3 names.
# expect: LayoutError at 10:5 naming unpacking 2 values into 3 names
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    a, b, c = jnp.split(x, 2, axis=0)
    return a
