# Bad input: a global statement in the body.
# expect: UnsupportedError at 13:5 naming 'global' statements
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


COUNT = 0


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    global COUNT
    return x
