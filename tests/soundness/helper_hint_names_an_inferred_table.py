"""A helper's hint on a whole value whose dims meshify named itself (Mistral's ``rotate(x, cos: Tensor["length",
"rotary"], ...)`` given the table ``jnp.outer(jnp.arange(seqlen), freqs)``, ``freqs`` from ``jnp.arange(0,
head_dim, 2)[: head_dim // 2]`` with ``head_dim`` a config's int: ``[length, head_dim?[::2]?...]``): taken as it is
where the differing dims are inferred and whole, the value keeping its own names, as it was taken when the table
was of unknown dims (before a6bc08f named the arange).  Refused between the two: 'rotate() hints cos as [length,
rotary] but the caller passes [length, head_dim?]'."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    head_dim: int = 8


def precompute_freqs(head_dim, length, theta=10000.0):
    freqs = 1.0 / (theta ** (jnp.arange(0, head_dim, 2)[: head_dim // 2].astype(jnp.float32) / head_dim))
    angles = jnp.outer(jnp.arange(length, dtype=jnp.float32), freqs)
    return jnp.cos(angles), jnp.sin(angles)


def rotate(x, cos: Tensor["length", "rotary"], sin: Tensor["length", "rotary"]):
    x1, x2 = jnp.split(x, 2, axis=-1)
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return jnp.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=-1)


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model"})
def f(q: Tensor["batch", "length", "heads", "head_dim"], cfg: Config = Config()):
    cos, sin = precompute_freqs(cfg.head_dim, q.shape[1])
    return rotate(q, cos, sin)


def inputs():
    return (np.random.default_rng(13).standard_normal((4, 8, 8, 8)).astype(np.float32),)
