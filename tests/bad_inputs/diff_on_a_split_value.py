# Bad input: jnp.diff along a split dim (each device holds only its block of every row).
# expect: UnsupportedError at 10:12 naming jax.numpy.diff
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=4)
def f(x: Tensor["batch", "d"]):
    return jnp.diff(x, axis=0)
