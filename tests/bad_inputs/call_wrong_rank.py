# Bad input: a 1-dim array for a 2-dim hint.
# expect: CallError at 10:32 naming argument 'y' has shape (2, 4)
# call: x=2x4 y=2x4
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"], y: Tensor["model"]) -> Tensor["b", "model"]:
    return x + y
