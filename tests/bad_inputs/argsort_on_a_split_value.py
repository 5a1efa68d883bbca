# Bad input: jnp.argsort along a split dim (each device holds only its block of every row).
# expect: UnsupportedError at 10:12 naming jax.numpy.argsort
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=4)
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return jnp.argsort(x, axis=0)
