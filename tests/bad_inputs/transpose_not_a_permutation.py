# Bad input: transpose axes that repeat a dim.
# expect: LayoutError at 10:12 naming not a permutation
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["model", "b"]:
    return jnp.transpose(x, (0, 0))
