# Bad input: @mesh with rules but no axes.
# expect: AnnotationError at 8:2 naming at least one axis
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(rules={"d_ff": None})
def f(x: Tensor["d_ff"]) -> Tensor["d_ff"]:
    return x
