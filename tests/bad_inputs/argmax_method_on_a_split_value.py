# Bad input: x.argmax() of a split value.
# expect: UnsupportedError at 10:12 naming method .argmax()
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b"]:
    return x.argmax(axis=-1)
