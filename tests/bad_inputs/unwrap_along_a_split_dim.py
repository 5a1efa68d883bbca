# Bad input: a phase unwrap along a split dim (each device holds only its block of every row).  This case was
# jax.nn.glu along the split dim, which now moves its halves as jnp.split's sections, and before that cummax.
# expect: UnsupportedError at 11:12 naming 'model'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]):
    return jnp.unwrap(x, axis=1)
