# Bad input: a while statement on a traced array (a Python while on static values runs).
# expect: UnsupportedError at 10:11 naming a while loop on
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    while jnp.sum(x) > 0:
        x = x * 2
    return x
