"""A config as model code writes it: a NamedTuple (and a frozen dataclass) of Python values with a
``@property`` (``head_dim``) and a method (``scale()``), read in the @mesh function to reshape a projection
whose features are split into heads and to scale the scores.  Before, ``cfg.scale()`` was "cannot infer the
dims of 'cfg.scale()'"."""
import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    d_model: int = 16
    n_heads: int = 8

    @property
    def head_dim(self):
        return self.d_model // self.n_heads

    def scale(self):
        return self.head_dim ** -0.5


@dataclasses.dataclass(frozen=True)
class FrozenConfig:
    n_heads: int = 8
    temperature: float = 2.0

    def inverse_temperature(self):
        return 1.0 / self.temperature


@mesh(batch=2, model=4, rules={"q": "model"})
def f(x: Tensor["batch", "length", "d"], wq: Tensor["d", "q"], cfg: Config = Config(),
      other: FrozenConfig = FrozenConfig()) -> Tensor["batch", "length", "q"]:
    B, L, _ = x.shape
    q = (x @ wq).reshape(B, L, cfg.n_heads, cfg.head_dim)
    s = jnp.einsum("blhd,bmhd->bhlm", q, q) * cfg.scale() * other.inverse_temperature()
    o = jnp.einsum("bhlm,bmhd->blhd", jax.nn.softmax(s, axis=-1), q)
    return o.reshape(B, L, cfg.n_heads * cfg.head_dim)


def inputs():
    rng = np.random.default_rng(3607)
    return (rng.standard_normal((4, 8, 16)) * 0.3).astype(np.float32), \
        (rng.standard_normal((16, 16)) * 0.3).astype(np.float32)
