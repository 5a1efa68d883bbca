# Bad input: a def with its body on the same line.
# expect: UnsupportedError at 9:1 naming one-line function
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model"]) -> Tensor["model"]: return x
