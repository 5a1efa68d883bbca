# Bad input: jnp.cumsum without axis= flattens a split value (which order would the blocks take?).
# expect: UnsupportedError at 10:12 naming axis=
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["n"]:
    return jnp.cumsum(x)
