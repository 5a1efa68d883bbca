"""A NamedTuple carried by a Python loop whose body leaves its field in another layout than it found
(``s.acc`` split along ``ff`` before the loop, whole after ``jnp.tanh(s.acc @ w)``): the body is rewritten once,
for the layout of the first iteration, so the second contracted a whole ``s.acc`` with a block of ``w`` (a raw
JAX error from the generated code: "dot_general requires contracting dimensions to have the same shape").
Refused instead, naming ``s.acc``, both layouts and a fix (a dict's value is converted before the loop instead:
dict_of_partial_sums_carried_by_a_loop)."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


class State(NamedTuple):
    acc: Tensor["batch", "ff"]


@mesh(batch=2, model=4, rules={"ff": "model"})
def f(x: Tensor["batch", "ff"], w: Tensor["ff", "ff"], hs: list[Tensor["batch", "ff"]]):
    s = State(acc=x)
    for _ in hs:
        s = s._replace(acc=jnp.tanh(s.acc @ w))
    return s.acc


def inputs():
    rng = np.random.default_rng(71)
    return (rng.standard_normal((4, 16)).astype(np.float32), (rng.standard_normal((16, 16)) * 0.3).astype(np.float32),
            [rng.standard_normal((4, 16)).astype(np.float32) for _ in range(3)])
