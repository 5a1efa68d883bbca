# Bad input: a return hint that is not a Tensor hint.
# expect: AnnotationError at 9:30 naming return hint 'int'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model"]) -> int:
    return x
