# Bad input: @mesh with positional sizes.
# expect: AnnotationError at 8:7 naming keyword arguments only
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(2, 4)
def f(x: Tensor["model"]) -> Tensor["model"]:
    return x
