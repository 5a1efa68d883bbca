# Bad input: a reshape of a split value with no names for the new dims, flattening the split minor dim
# (a split that enters a merge as its major part is inferred: tests/rules/test_shapes.py).
# expect: UnsupportedError at 11:9 naming map 'model' to no mesh axis
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4)
def f(x: Tensor["b", "model"]) -> Tensor["b", "model"]:
    y = x.reshape(-1)
    return x
