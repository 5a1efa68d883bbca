# Bad input: a with statement in the body.
# expect: UnsupportedError at 10:5 naming 'with' statements
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    with jax.named_scope("block"):
        y = x * 2
    return y
