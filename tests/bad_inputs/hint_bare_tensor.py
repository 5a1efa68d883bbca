# Bad input: a Tensor hint without dims.
# expect: AnnotationError at 9:10 naming bare Tensor hint
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor) -> Tensor["model"]:
    return x
