# Bad input: one mesh axis named twice.
# expect: AnnotationError at 8:16 naming names 'model' twice
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4, model=2)
def f(x: Tensor["model"]) -> Tensor["model"]:
    return x
