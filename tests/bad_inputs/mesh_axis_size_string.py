# Bad input: a mesh axis size written as a string.
# expect: AnnotationError at 8:7 naming size '4'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model="4")
def f(x: Tensor["model"]) -> Tensor["model"]:
    return x
