# Bad input: jax.vmap of a lambda with a named axis (collectives over it are not modelled).
# expect: UnsupportedError at 10:52 naming vmap option 'axis_name'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    return jax.vmap(lambda row: row * 2, axis_name="i")(x)
