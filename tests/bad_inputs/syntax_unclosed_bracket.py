# Bad input: an unclosed bracket.
# expect: SourceError at 10:20 naming never closed
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model"]) -> Tensor["model"]:
    return jnp.tanh(x
