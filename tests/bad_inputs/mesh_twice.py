# Bad input: two @mesh decorators on one function.
# expect: AnnotationError at 9:1 naming 2 @mesh decorators
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
@mesh(model=2)
def f(x: Tensor["model"]) -> Tensor["model"]:
    return x
