"""The LRU's ``jax.vmap(lambda x, u: C @ x + D * u)(states, inputs)`` with the mapped length split over 'model'
(sequence parallel) and C's contracted 'states' on 'model' too: each device holds other rows, so completing the
partial sum C @ x with a psum over 'model' would add up different rows (a wrong result, before), and
``jax.vmap(lambda u: B @ u)`` with B's 'd_hidden' on 'model' returned the rows' block of one d_hidden block (a
crash: "an axis splits two dims").  Both are refused, naming the dim to unsplit."""

import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"length": "model", "states": "model"})
def f(c: Tensor["d_model", "states"], d: Tensor["d_model"], h: Tensor["length", "states"],
      u: Tensor["length", "d_model"]):
    return jax.vmap(lambda x, v: c @ x + d * v)(h, u)


def inputs():
    rng = np.random.default_rng(39)
    return (rng.normal(size=(8, 16)).astype(np.float32), rng.normal(size=(8,)).astype(np.float32),
            rng.normal(size=(16, 16)).astype(np.float32), rng.normal(size=(16, 8)).astype(np.float32))
