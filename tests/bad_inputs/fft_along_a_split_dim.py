# Bad input: an FFT along a dim split over a mesh axis (each device holds a block of the signal).
# expect: UnsupportedError at 11:12 naming along 'd_model', which is split over 'model'
from typing import Annotated

import jax
import jax.numpy as jnp
from meshify import mesh

@mesh(batch=2, model=4, rules={"d_model": "model"})
def f(x: Annotated[jax.Array, "batch", "length", "d_model"]):
    return jnp.fft.fft(x, axis=-1).real
