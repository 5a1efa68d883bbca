"""``jax.vmap(lambda u: B @ u)(inputs)`` (the LRU's input projection) with the mapped length split over 'model'
and B's 'd_hidden' on 'model' too: each row's result would be split over the axis its rows are, a device holding
one block of rows and another of d_hidden (a crash before: "an axis splits two dims").  Refused, naming the dim
to unsplit."""

import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"length": "model", "d_hidden": "model"})
def f(b: Tensor["d_hidden", "d_model"], u: Tensor["length", "d_model"]):
    return jax.vmap(lambda x: b @ x)(u)


def inputs():
    rng = np.random.default_rng(40)
    return (rng.normal(size=(8, 8)).astype(np.float32), rng.normal(size=(16, 8)).astype(np.float32))
