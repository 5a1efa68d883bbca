# Bad input: a nested def closing over a split weight, passed to jax.vmap and kept as a value.
# expect: UnsupportedError at 11:23 naming row() is used as a value
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4, rules={"f": "model"})
def f(x: Tensor["n", "d"], w1: Tensor["d", "f"], w2: Tensor["f", "d"]) -> Tensor["n", "d"]:
    def row(r): return jnp.tanh(r @ w1) @ w2
    mapped = jax.vmap(row)
    return mapped(x)
