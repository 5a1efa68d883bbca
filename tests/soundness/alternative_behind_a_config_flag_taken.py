"""A call that takes the branch meshify could not rewrite (jnp.fft.fft along the split
batch is refused): refused when it runs, with the rewrite's error, pointing at the branch."""

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


class Config(NamedTuple):
    mixer: str = "cumsum"


@mesh(batch=8)
def f(a: Tensor["batch", "length"], cfg: Config = Config()):
    if cfg.mixer == "fft":
        return jnp.fft.fft(a, axis=0).real
    return jnp.cumsum(a * 0.5, axis=1)


def inputs():
    return (np.random.default_rng(0).normal(size=(8, 16)).astype(np.float32), Config("fft"))
