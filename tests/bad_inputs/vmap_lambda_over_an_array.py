# Bad input: a lambda applied to an array.
# expect: UnsupportedError at 10:12 naming jax.vmap(lambda row: row * 2)
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    return jax.vmap(lambda row: row * 2)(x)
