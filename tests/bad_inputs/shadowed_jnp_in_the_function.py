# Bad input: jnp rebound to numpy inside the function.
# expect: UnsupportedError at 14:12 naming 'jnp' is imported and also reassigned
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


import numpy as np


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    jnp = np
    return jnp.tanh(x)
