# Bad input: einsum subscripts for 2 operands given 1.
# expect: LayoutError at 10:23 naming name 2 operands but 1
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    return jnp.einsum("bd,df->bf", x)
