"""DiT's sinusoidal timestep embedding as ports write it: ``jnp.arange(start=0, stop=half, dtype=...)`` by
keyword, positionally, with ``half`` from a config field and from a literal dim (the frequencies then a
vector of a literal length, broadcast against split steps: a new dim named by its size), ``math.log``."""

import math
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    dim: int = 16


def embed(t, dim, max_period=10000, keyword=True):
    half = dim // 2
    steps = jnp.arange(start=0, stop=half, dtype=jnp.float32) if keyword else jnp.arange(0, half, dtype=jnp.float32)
    freqs = jnp.exp(-math.log(max_period) * steps / half)
    args = t[:, None].astype(jnp.float32) * freqs[None]
    return jnp.concatenate([jnp.cos(args), jnp.sin(args)], axis=-1)


@mesh(batch=2, model=4, rules={"hidden": "model"})
def f(t: Tensor["batch"], w: Tensor["freq", "hidden"], cfg: Config = Config()):
    a = embed(t, cfg.dim) @ w
    b = embed(t, 16, keyword=False) @ w
    c = embed(t, 16, max_period=100)
    return a + b, c


def inputs():
    rng = np.random.default_rng(0)
    return rng.integers(0, 1000, size=8).astype(np.int32), (rng.normal(size=(16, 8)) / 4).astype(np.float32)
