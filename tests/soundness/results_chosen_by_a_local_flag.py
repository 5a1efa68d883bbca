"""Results chosen by a flag the function computes from its bool flags (``want = return_hidden and not
train``): rewritten once per combination of the flags, ``want`` is known in each version, so each version
returns what its branch returns and the runtime picks the version per call (it was refused: the out_specs
of one program can be chosen per call by static parameters only).  ``g``: the same with an int parameter,
which is no flag: refused, naming the local and the fix."""

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


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


def scenario(mod, pick):
    """Every combination of the two flags."""
    x, w = inputs()
    return {f"{h}-{t}": pick(mod.f)(x, w, return_hidden=h, train=t) for h in (False, True) for t in (False, True)}
