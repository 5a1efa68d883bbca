"""A NamedTuple after one branch of an if on a flag known only when traced and a plain tuple of other layouts after
the other (``t = Pair(x, jnp.sum(x, axis=0))`` or ``t = (jnp.sum(x, axis=0), x)``), then unpacked: refused, naming
both. SILENT WRONG RESULT before: the first branch's pytree was kept whatever the other left, so with the flag off
``a`` (a partial sum over 'batch') was rewritten as ``x`` and ``jnp.sum(a ** 2)`` summed the squares of each
device's partial column sums (65.74 for 67.96)."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


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


def inputs():
    rng = np.random.default_rng(3501)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    return (x, False)
