# Bad input: a running max along a split dim (each device holds only its block of every row).
# expect: UnsupportedError at 10:12 naming jax.lax.cummax
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    return jax.lax.cummax(x, axis=1)
