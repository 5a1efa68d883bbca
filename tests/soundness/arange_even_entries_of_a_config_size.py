"""``jnp.arange(0, dim, 2)`` with ``dim`` a config's int meshify cannot read (DeepSeek's
``precompute_freqs(cfg.qk_rope_head_dim, seqlen, cfg.rope_theta)``): the even entries of an inferred dim
named after it (``dim?[::2]?``), whole on every device, so the rotary table ``jnp.outer(jnp.arange(seqlen),
freqs)`` has named dims and broadcasts (``cos[None, :, None, :]``) against queries with the batch and heads
split.  Before, the arange was of unknown dims, so was the table: 'cannot infer the dims of cos'."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    rope_dim: int = 4
    theta: float = 10000.0


def precompute_freqs(dim, seqlen, theta):
    freqs = 1.0 / (theta ** (jnp.arange(0, dim, 2, dtype=jnp.float32) / dim))
    angles = jnp.outer(jnp.arange(seqlen, dtype=jnp.float32), freqs)
    return jnp.cos(angles), jnp.sin(angles)


def apply_rotary_emb(x, cos, sin):
    x1, x2 = x[..., 0::2], x[..., 1::2]
    cos, sin = cos[None, :, None, :], sin[None, :, None, :]
    return jnp.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1).reshape(x.shape)


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model"})
def f(q: Tensor["batch", "length", "heads", "rope"], tokens: Tensor["batch", "length"], cfg: Config = Config()):
    cos, sin = precompute_freqs(cfg.rope_dim, tokens.shape[1], cfg.theta)
    return apply_rotary_emb(q, cos, sin)


def inputs():
    rng = np.random.default_rng(4)
    return rng.standard_normal((4, 8, 8, 4)).astype(np.float32), rng.integers(0, 5, (4, 8)).astype(np.int32)
