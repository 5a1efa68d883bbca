# Bad input: a gated linear unit along a split dim (each device holds only its block of every row; jax.lax.cummax
# there, once this case, now combines the shard totals).
# expect: UnsupportedError at 11:12 naming jax.nn.glu
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]):
    return jax.nn.glu(x, axis=1)
