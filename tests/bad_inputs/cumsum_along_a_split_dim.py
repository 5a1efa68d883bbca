# Bad input: jnp.cumsum along a split dim.
# expect: UnsupportedError at 10:12 naming jax.numpy.cumsum
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    return jnp.cumsum(x, axis=1)
