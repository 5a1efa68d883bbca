# Bad input: an item of a tuple return hint that is not a Tensor hint.
# expect: AnnotationError at 9:53 naming item 'int'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model"]) -> tuple[Tensor["model"], int]:
    return x, 1
