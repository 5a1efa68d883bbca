# Bad input: jnp.sort along a split dim.
# expect: UnsupportedError at 10:12 naming jax.numpy.sort
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    return jnp.sort(x, axis=-1)
