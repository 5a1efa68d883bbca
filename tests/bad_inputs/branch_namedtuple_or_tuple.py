# Bad input: a NamedTuple after one branch of an if, a tuple of other layouts after the other.
# expect: LayoutError at 17:5 naming 't' is a Pair after one branch
from typing import NamedTuple

import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


class Pair(NamedTuple):
    a: jax.Array
    b: jax.Array


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], flag):
    if flag:
        t = Pair(x, jnp.sum(x, axis=0))
    else:
        t = (jnp.sum(x, axis=0), x)
    a, b = t
    return jnp.sum(a ** 2)
