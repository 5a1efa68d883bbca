# Bad input: an unexpected indent.
# expect: SourceError at 11:8 naming unexpected indent
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model"]) -> Tensor["model"]:
    y = x
        return y
