# Bad input: *args with a Tensor hint.
# expect: UnsupportedError at 9:7 naming *args with a Tensor hint
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(*xs: Tensor["model"]) -> Tensor["model"]:
    return xs[0]
