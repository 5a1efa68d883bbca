# Bad input: jax.nn.standardize along a split dim with where= (the statistics of each row's whole are psummed,
# masks are not modelled there yet; without where= it runs).
# expect: UnsupportedError at 11:48 naming where=
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=4)
def f(x: Tensor["batch", "d"]):
    return jax.nn.standardize(x, axis=0, where=x > 0)
