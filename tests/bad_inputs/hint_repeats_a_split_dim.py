# Bad input: a hint naming one split dim twice.
# expect: RulesError at 9:10 naming appears twice
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model", "model"]) -> Tensor["model"]:
    return x.sum(axis=0)
