# Bad input: a parameter named twice (only Python's compiler sees it; the parser accepts it).
# expect: SourceError at 9:27 naming duplicate argument 'x'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["model"], x: Tensor["model"]) -> Tensor["model"]:
    return jnp.tanh(x)
