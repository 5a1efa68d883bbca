# Bad input: a Python 2 print statement.
# expect: SourceError at 8:1 naming Missing parentheses
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


print "converting"


@mesh(model=4)
def f(x: Tensor["model"]) -> Tensor["model"]:
    return x
