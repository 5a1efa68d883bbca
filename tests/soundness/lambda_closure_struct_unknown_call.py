"""A lambda closing over a struct whose weight is split (p.w over d_ff), passed to a function meshify
does not model (jax.lax.map): each device would map with its block of the weight and the sum would
read its block as the whole.  Refused: x is whole, so jax.lax.map saw no split argument, the lambda
passed as a static value and JAX's replication check failed in the generated code."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


class Params(NamedTuple):
    w: Tensor["d", "d_ff"]


@mesh(model=8, rules={"d_ff": "model"})
def f(x: Tensor["n", "d"], p: Params) -> Tensor["n"]:
    return jnp.sum(jax.lax.map(lambda r: jnp.tanh(r @ p.w), x), axis=1)


def inputs():
    rng = np.random.default_rng(1433)
    return rng.standard_normal((4, 8)).astype(np.float32), Params(rng.standard_normal((8, 16)).astype(np.float32))
