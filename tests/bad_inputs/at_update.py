# Bad input: an x.at[...].set(...) update.
# expect: UnsupportedError at 10:12 naming attribute .at
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    return x.at[0].set(0.0)
