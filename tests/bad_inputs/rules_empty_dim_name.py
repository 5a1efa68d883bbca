# Bad input: a rule for the empty dim name.
# expect: RulesError at 8:16 naming rules key ''
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4, rules={"": "model"})
def f(x: Tensor["d_ff"]) -> Tensor["d_ff"]:
    return x
