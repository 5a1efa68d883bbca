# Bad input: a 4x4 mesh on 8 devices.
# expect: CallError at 9:1 naming needs 16 devices
# call: x=16x16
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(data=4, model=4)
def f(x: Tensor["data", "model"]) -> Tensor["data", "model"]:
    return x * 2
