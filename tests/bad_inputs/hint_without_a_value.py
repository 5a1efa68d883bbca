# Bad input: an annotated name with no value.
# expect: UnsupportedError at 10:5 naming annotation without a value
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model"]) -> Tensor["model"]:
    h: Tensor["model"]
    return x
