"""An elementwise function applied to a whole pytree argument (jnp.asarray(p)) converts its fields into one
array; meshify took the pytree for a static value and passed it through with a split field: refused now."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


class Weights(NamedTuple):
    w: Tensor["d", "e"]


@mesh(batch=2, model=4, rules={"e": "model"})
def f(p: Weights, x: Tensor["batch", "d"]) -> Tensor["batch", "e"]:
    return x @ jnp.asarray(p)[0]


def inputs():
    rng = np.random.default_rng(285)
    return Weights(rng.standard_normal((8, 16)).astype(np.float32)), rng.standard_normal((4, 8)).astype(np.float32)
