# Bad input: @mesh on a coroutine.
# expect: UnsupportedError at 9:1 naming async def f
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
async def f(x: Tensor["model"]) -> Tensor["model"]:
    return x
