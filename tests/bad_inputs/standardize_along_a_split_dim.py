# Bad input: jax.nn.standardize along a split dim (each device holds only its block of every row; jnp.diff there,
# once this case, now gathers the rows).
# expect: UnsupportedError at 11:12 naming jax.nn.standardize
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=4)
def f(x: Tensor["batch", "d"]):
    return jax.nn.standardize(x, axis=0)
