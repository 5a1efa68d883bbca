# Bad input: a file without any @mesh function.
# expect: SourceError at 1:1 naming no @mesh functions
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


def f(x):
    return jnp.tanh(x)
