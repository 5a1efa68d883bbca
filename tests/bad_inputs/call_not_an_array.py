# Bad input: a Python float where an array is hinted.
# expect: CallError at 10:32 naming argument 'y' is float
# call: x=2x4 y=float
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"], y: Tensor["model"]) -> Tensor["b", "model"]:
    return x + y
