"""A call that takes the branch meshify could not rewrite (jax.lax.associative_scan has no rule over the
split batch): refused when it runs, with the rewrite's error, pointing at the branch."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


class Config(NamedTuple):
    scan: str = "sequential"


def combine(left, right):
    return left[0] * right[0], right[0] * left[1] + right[1]


@mesh(batch=8)
def f(a: Tensor["batch", "length"], cfg: Config = Config()):
    if cfg.scan == "associative":
        return jax.lax.associative_scan(combine, (a, a * 0.5), axis=1)[1]
    return jnp.cumsum(a * 0.5, axis=1)


def inputs():
    return (np.random.default_rng(0).normal(size=(8, 16)).astype(np.float32), Config("associative"))
