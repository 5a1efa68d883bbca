# Bad input: an einsum output letter no operand has.
# expect: LayoutError at 10:23 naming letter 'z'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    return jnp.einsum("bd->bz", x)
