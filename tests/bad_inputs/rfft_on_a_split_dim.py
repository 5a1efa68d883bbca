# Bad input: jnp.fft.rfft along a split dim.
# expect: UnsupportedError at 10:12 naming jnp.fft.rfft of 'x' along 'model'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    return jnp.fft.rfft(x, axis=-1)
