# Bad input: a @jax.vmap helper mapped along the split batch returns an op's result of dims meshify cannot infer
# (it was taken as one whole value, and shard_map refused its out_specs with a raw JAX error).
# expect: UnsupportedError at 16:12 naming returns an array of dims meshify cannot infer
from typing import Annotated

import jax
import jax.numpy as jnp
from meshify import mesh

@jax.vmap
def row_dec(u):
    return jnp.linalg.qr(u)[0]

@mesh(batch=2, model=4)
def f(x: Annotated[jax.Array, "batch", "length", "d_model"]):
    return row_dec(x)
