# Bad input: a Latin-1 byte in a string literal.
# expect: SourceError at 10:15 naming not UTF-8
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model"]) -> Tensor["model"]:
    name = "naïve"
    return x
