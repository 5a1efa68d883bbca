# Bad input: a return hint whose rules split two dims over one axis.
# expect: RulesError at 9:49 naming 'd_ff' and 'heads'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4, rules={"d_ff": "model", "heads": "model"})
def f(x: Tensor["d_ff"], y: Tensor["heads"]) -> Tensor["d_ff", "heads"]:
    return jnp.einsum("f,h->fh", x, y)
