# Bad input: a dict of arrays hinted by its value type only: the keys are not in the hint (was taken as static).
# expect: AnnotationError at 8:10 naming a dict of arrays under keys each call chooses
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2)
def g(e: dict[str, Tensor["batch", "k"]]):
    return e["a"] * 2 + e["b"].sum()
