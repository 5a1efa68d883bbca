# Bad input: a fractional mesh axis size.
# expect: AnnotationError at 8:15 naming size 2.5
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(data=2, model=2.5)
def f(x: Tensor["model"]) -> Tensor["model"]:
    return x
