# Bad input: a variadic (jaxtyping-style) dim in a hint.
# expect: AnnotationError at 9:17 naming '*batch'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["*batch", "model"]) -> Tensor["model"]:
    return x.sum(axis=0)
