"""guided diffusion's ``_extract_into_tensor``: ``while len(res.shape) < len(broadcast_shape): res = res[...,
None]`` in a helper, on ranks meshify knows (written as the count this version runs); a while on a config's
static value in the @mesh function, kept as written; ``_`` bound before the loop keeps its value."""

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    halvings: int = 2


def extract(arr, timesteps, broadcast_shape):
    res = arr[timesteps]
    while len(res.shape) < len(broadcast_shape):
        res = res[..., None]
    return res + jnp.zeros(broadcast_shape, res.dtype)


@mesh(batch=2, model=4, rules={"c": "model"})
def q_sample(x0: Tensor["batch", "h", "w", "c"], t: Tensor["batch"], noise: Tensor["batch", "h", "w", "c"],
             cfg: Config = Config()):
    B, _, W, C = x0.shape
    alphas = jnp.cumprod(1.0 - jnp.linspace(1e-4, 0.02, 100, dtype=jnp.float32))
    out = extract(jnp.sqrt(alphas), t, x0.shape) * x0 + extract(jnp.sqrt(1.0 - alphas), t, x0.shape) * noise
    scale, n = 1.0, 0
    while n < cfg.halvings:
        scale = scale / 2
        n += 1
    return out * scale, jnp.full((B,), _, dtype=jnp.float32)


def inputs():
    rng = np.random.default_rng(0)
    x0, noise = (rng.normal(size=(8, 4, 4, 8)).astype(np.float32) for _ in range(2))
    return {"q_sample": (x0, rng.integers(0, 100, size=8).astype(np.int32), noise)}
