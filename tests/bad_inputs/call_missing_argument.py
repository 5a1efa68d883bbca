# Bad input: a call without the second argument.
# expect: CallError at 10:28 naming missing a required argument: 'w'
# call: x=8x5
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "d"], w: Tensor["d", "model"]) -> Tensor["b", "model"]:
    return x @ w
