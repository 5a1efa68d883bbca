# Bad input: tabs and spaces mixed in one block.
# expect: SourceError at 11:1 naming tabs and spaces
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model"]) -> Tensor["model"]:
	y = x
        return y
