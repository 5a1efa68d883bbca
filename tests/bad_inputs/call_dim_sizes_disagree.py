# Bad input: dim 'd' of size 5 in one argument and 6 in another.
# expect: CallError at 10:7 naming dim 'd' is 6 in argument 'w' but 5
# call: x=8x5 w=6x4
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "d"], w: Tensor["d", "model"]) -> Tensor["b", "model"]:
    return x @ w
