# Bad input: break in a Python loop over leaves of different layouts, which meshify unrolls (a copy of the body per leaf).
# expect: UnsupportedError at 20:13 naming break
from typing import NamedTuple

import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


class P(NamedTuple):
    w1: Tensor["d", "f"]
    b: Tensor["f"]


@mesh(model=4, rules={"f": "model"})
def f(p: P, x: Tensor["batch", "d"]):
    total = jnp.sum(x)
    for q in jax.tree.leaves(p):
        if q.ndim > 1:
            break
        total = total + jnp.sum(q)
    return total
