# Bad input: a conditional expression on a traced value.
# expect: UnsupportedError at 10:17 naming conditional expression on a traced array
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    return x if x.mean() > 0 else -x
