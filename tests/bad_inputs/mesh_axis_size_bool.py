# Bad input: a bool as a mesh axis size.
# expect: AnnotationError at 8:7 naming size True
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=True)
def f(x: Tensor["model"]) -> Tensor["model"]:
    return x
