# Bad input: a rule splitting one dim twice over one axis.
# expect: RulesError at 8:24 naming repeats a mesh axis
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(data=2, model=4, rules={"d_ff": ("model", "model")})
def f(x: Tensor["d_ff"]) -> Tensor["d_ff"]:
    return x
