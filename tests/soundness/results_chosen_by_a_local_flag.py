"""Results chosen by a flag the function computes (``want = return_hidden and not train``): out_specs are
chosen per call by static parameters only, so meshify refuses (naming the local and the fix) rather than
guess."""

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"], return_hidden: bool = False,
      train: bool = False):
    h = jnp.tanh(x @ w)
    want = return_hidden and not train
    if want:
        return h.sum(-1), h
    return h.sum(-1)


def inputs():
    rng = np.random.default_rng(0)
    return rng.normal(size=(8, 16)).astype(np.float32), rng.normal(size=(16, 32)).astype(np.float32)
