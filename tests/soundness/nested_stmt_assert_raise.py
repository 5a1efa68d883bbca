"""assert and raise on static values in a helper and in the @mesh function, kept as checks run at
trace time: x.shape[-1] of the split heads dim must mean its global size (4 heads over 4
devices: a local 1 would fail the assert)."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    heads: int = 4
    scale: float = 0.5


CFG = Config()


def attend(q, k, cfg):
    assert q.shape[1] % cfg.heads == 0, f"{q.shape[1]} heads, config says {cfg.heads}"
    if cfg.scale <= 0:
        raise ValueError(f"scale must be positive, got {cfg.scale}")
    s = jnp.einsum("bhe,bhe->bh", q, k) * cfg.scale
    return jax.nn.softmax(s, axis=0)


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(q: Tensor["batch", "heads", "e"], k: Tensor["batch", "heads", "e"], cfg: Config = CFG) -> Tensor["batch", "heads"]:
    assert q.shape == k.shape and q.shape[1] == cfg.heads
    if q.ndim != 3: raise ValueError("q must be [batch, heads, e]")
    return attend(q, k, cfg)


def inputs():
    rng = np.random.default_rng(1411)
    return rng.standard_normal((4, 4, 8)).astype(np.float32), rng.standard_normal((4, 4, 8)).astype(np.float32)
