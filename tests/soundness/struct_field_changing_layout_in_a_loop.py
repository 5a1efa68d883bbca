"""A dataclass carried by a Python loop whose body leaves its field in another layout than it found (``s.acc``
split along ``ff`` before the loop, whole after ``jnp.tanh(s.acc @ w)``), in a module that does not import
``dataclasses`` (the body rebuilds it, ``s = State(acc=...)``): the body is rewritten once, for the layout of the
first iteration, so the second contracted a whole ``s.acc`` with a block of ``w`` (a raw JAX error from the
generated code).  Refused, naming ``s.acc``, both layouts and the fixes, one of which is importing ``dataclasses``:
meshify then converts the field before the loop with ``dataclasses.replace``, as it does a NamedTuple's with
``_replace`` (struct_field_carried_by_a_loop_in_another_layout) and a dict's value
(dict_of_partial_sums_carried_by_a_loop)."""
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@jax.tree_util.register_dataclass
@dataclass
class State:
    acc: Tensor["batch", "ff"]


@mesh(batch=2, model=4, rules={"ff": "model"})
def f(x: Tensor["batch", "ff"], w: Tensor["ff", "ff"], hs: list[Tensor["batch", "ff"]]):
    s = State(acc=x)
    for _ in hs:
        s = State(acc=jnp.tanh(s.acc @ w))
    return s.acc


def inputs():
    rng = np.random.default_rng(71)
    return (rng.standard_normal((4, 16)).astype(np.float32), (rng.standard_normal((16, 16)) * 0.3).astype(np.float32),
            [rng.standard_normal((4, 16)).astype(np.float32) for _ in range(3)])
