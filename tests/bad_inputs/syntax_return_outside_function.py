# Bad input: a return statement at module level.
# expect: SourceError at 13:1 naming 'return' outside function
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model"]) -> Tensor["model"]:
    return jnp.tanh(x)


return f
