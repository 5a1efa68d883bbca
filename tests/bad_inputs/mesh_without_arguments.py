# Bad input: @mesh without its axes.
# expect: AnnotationError at 8:2 naming needs the mesh's axes
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh
def f(x: Tensor["model"]) -> Tensor["model"]:
    return x
