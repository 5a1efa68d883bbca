# Bad input: an anonymous dim '_' in a hint.
# expect: AnnotationError at 9:17 naming '_'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["_", "model"]) -> Tensor["model"]:
    return x.sum(axis=0)
