# Bad input: concatenating values of different ranks.
# expect: LayoutError at 10:12 naming different ranks
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"], v: Tensor["model"]) -> Tensor["b", "model"]:
    return jnp.concatenate([x, v], axis=0)
