# Bad input: Python branching on a traced value.
# expect: UnsupportedError at 10:8 naming an if on a traced array
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    if x.sum() > 0:
        return x
    return -x
