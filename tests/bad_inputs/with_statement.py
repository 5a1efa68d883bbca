# Bad input: a with statement whose context changes the values computed inside (a named scope, which does not,
# is kept; this one would be rewritten as if it were not there).
# expect: UnsupportedError at 11:10 naming jax.default_matmul_precision
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    with jax.default_matmul_precision("bfloat16"):
        y = x * 2
    return y
