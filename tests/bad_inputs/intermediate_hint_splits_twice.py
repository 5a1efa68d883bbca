# Bad input: an intermediate hint whose rules split two dims over one axis.
# expect: RulesError at 10:8 naming 'd_ff' and 'heads'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4, rules={"d_ff": "model", "heads": "model"})
def f(x: Tensor["d_ff"], y: Tensor["b"]) -> Tensor["d_ff"]:
    h: Tensor["d_ff", "heads"] = jnp.einsum("f,b->fb", x, y)
    return x
