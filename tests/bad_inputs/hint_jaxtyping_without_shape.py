# Bad input: a jaxtyping hint without a shape string.
# expect: AnnotationError at 10:10 naming no literal shape string
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh
from jaxtyping import Array, Float


@mesh(model=4)
def f(x: Float[Array, 3]) -> Tensor["model"]:
    return x
