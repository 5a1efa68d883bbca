"""``jnp.arange`` of a Python int meshify cannot size, as model code builds masks and tables: a padding
mask ``jnp.arange(cfg.max_len)[None, :] < lengths[:, None]`` beside a batch split over 'data' (lengths
zero and beyond the length), rotary frequencies ``jnp.arange(half)`` with ``half = x.shape[-1] // 2`` against
positions broadcast over split heads, and a causal window from ``jnp.arange(n)`` with ``n`` a static
argument; gradients through x.  Before, "cannot infer the dims of ..."."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    max_len: int = 6


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model"})
def f(x: Tensor["batch", "seq", "heads", "head_dim"], lengths: Tensor["batch"], cfg: Config = Config(),
      n: int = 6) -> tuple[Tensor["batch", "seq", "heads", "head_dim"], Tensor["batch"]]:
    B, L = x.shape[0], x.shape[1]
    mask = jnp.arange(cfg.max_len)[None, :] < lengths[:, None]
    half = x.shape[-1] // 2
    freq = 10000.0 ** (-jnp.arange(half, dtype=jnp.float32) / half)
    angles = jnp.arange(L)[:, None] * freq[None, :]
    cos, sin = jnp.cos(angles)[None, :, None, :], jnp.sin(angles)[None, :, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    rotated = jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    q = jnp.arange(n)
    causal = (q[:, None] >= q[None, :]).astype(jnp.float32)
    pooled = jnp.sum(jnp.where(mask[:, :, None, None], rotated, 0.0), axis=(1, 2, 3))
    return rotated * jnp.sum(causal), pooled


def inputs():
    rng = np.random.default_rng(12)
    return rng.standard_normal((4, 6, 4, 8)).astype(np.float32), np.array([0, 3, 6, 9], np.int32)
