"""Diffusion code's noise schedule: tables the function builds (jnp.linspace, 1 - betas, jnp.cumprod,
jnp.concatenate for the previous step's; a length from a config field), indexed by per-example steps split over 'batch' -- each device
looks its own steps up in its whole copy. Steps out of range and negative (JAX clamps and wraps as on one
device), a 2-D index, float16 inputs."""

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-3


class Config(NamedTuple):
    num_timesteps: int = 100


@mesh(batch=8)
def from_config(x0: Tensor["batch", "d"], t: Tensor["batch"], cfg: Config = Config()):
    betas = jnp.linspace(1e-4, 0.02, cfg.num_timesteps, dtype=jnp.float32)
    alphas_cumprod = jnp.cumprod(1.0 - betas, axis=0)
    return jnp.sqrt(alphas_cumprod[t])[:, None] * x0


@mesh(batch=2, model=4, rules={"d": "model"})
def q_sample(x0: Tensor["batch", "d"], t: Tensor["batch"], noise: Tensor["batch", "d"]):
    betas = jnp.linspace(1e-4, 0.02, 100, dtype=jnp.float32)
    alphas_cumprod = jnp.cumprod(1.0 - betas)
    alphas_prev = jnp.concatenate([jnp.ones(1, dtype=jnp.float32), alphas_cumprod[:-1]])
    a = alphas_cumprod[t][:, None]
    prev = alphas_prev[t]
    pair = alphas_cumprod[jnp.stack([t, t // 2], axis=-1)]
    out = jnp.sqrt(a) * x0 + jnp.sqrt(1.0 - a) * noise
    return out.astype(x0.dtype), prev, pair.sum(-1)


def inputs():
    rng = np.random.default_rng(0)
    x0 = rng.normal(size=(8, 16)).astype(np.float16)
    noise = rng.normal(size=(8, 16)).astype(np.float16)
    t = rng.integers(-10, 120, size=8).astype(np.int32)
    return {"q_sample": (x0, t, noise), "from_config": (x0.astype(np.float32), t)}
