# Bad input: a rule mapping a dim to a number.
# expect: RulesError at 8:16 naming maps to 4
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4, rules={"d_ff": 4})
def f(x: Tensor["d_ff"]) -> Tensor["d_ff"]:
    return x
