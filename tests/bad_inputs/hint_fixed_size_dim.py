# Bad input: a fixed-size dim '8' in a hint.
# expect: AnnotationError at 9:26 naming '8'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model", "8"]) -> Tensor["model"]:
    return x.sum(axis=1)
