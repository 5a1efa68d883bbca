# Bad input: an x.at[...].set(...) update of elements along a split dim.
# expect: UnsupportedError at 10:20 naming indexing split dim 'model'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    return x.at[:, 0].set(0.0)
