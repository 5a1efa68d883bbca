# Bad input: an if on a module variable assigned under a module-level if (meshify cannot tell it from an array).
# expect: UnsupportedError at 16:8 naming which reads a value meshify cannot tell from an array
import os

import jax.numpy as jnp
from meshify import Tensor, mesh

if os.environ.get("MESHIFY_TEST_MODE"):
    MODE = 2
else:
    MODE = 1


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    if MODE == 2:
        return jnp.tanh(x)
    return -x
