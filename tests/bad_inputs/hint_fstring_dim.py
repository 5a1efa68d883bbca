# Bad input: an f-string as a dim name.
# expect: AnnotationError at 9:17 naming f"model"
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor[f"model"]) -> Tensor["model"]:
    return x
