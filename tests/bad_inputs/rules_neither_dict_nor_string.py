# Bad input: rules given as a list.
# expect: RulesError at 8:16 naming neither a dict nor a string
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4, rules=["d_ff", "model"])
def f(x: Tensor["d_ff"]) -> Tensor["d_ff"]:
    return x
