# Bad input: starred unpacking of an array along a first dim whose size meshify does not know while rewriting.
# expect: UnsupportedError at 9:5 naming three
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model"})
def f(x: Tensor["three", "batch", "heads"]):
    first, *rest = x
    return first * rest[0] * rest[1]
