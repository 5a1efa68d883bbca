# Bad input: jnp imported, then rebound to numpy.
# expect: UnsupportedError at 14:12 naming 'jnp' is imported and also reassigned
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


import numpy
jnp = numpy


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    return jnp.tanh(x)
