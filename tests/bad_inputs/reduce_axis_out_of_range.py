# Bad input: a reduction over axis 2 of a 2-dim value.
# expect: LayoutError at 10:23 naming axis 2 is out of range
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b"]:
    return x.sum(axis=2)
