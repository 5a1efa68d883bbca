# Bad input: a mesh axis of 10**12 devices.
# expect: CallError at 10:7 naming 1000000000000 shards
# call: x=8
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=1000000000000)
def f(x: Tensor["model"]) -> Tensor["model"]:
    return x * 2
