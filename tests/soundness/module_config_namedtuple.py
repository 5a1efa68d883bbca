"""A module-level config instance, ``CFG = Cfg(heads=4)`` of a NamedTuple of the module with literal fields,
read as the config it is: ``jnp.max(initial=CFG.floor)`` over a split dim, ``+ CFG.eps`` beside split
values, ``CFG.heads`` as a reshape size, ``if CFG.gated:``; a field computed from literals and ``math`` (``eps=1 / math.sqrt(1e6)``).  Before, CFG was opaque ("may be an array"):
``initial=CFG.floor`` was refused as an array and ``h + CFG.eps`` as a value of unknown dims (found by the
second attack of session 16).  The program is keyed on CFG's value, as on a literal constant's."""
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Cfg(NamedTuple):
    heads: int = 2
    floor: float = -0.5
    eps: float = 1e-3
    gated: bool = False


CFG = Cfg(heads=2 * 2, gated=True, eps=1 / math.sqrt(1e6))


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "seq", "d"], w: Tensor["d", "d_ff"]):
    B, L, _ = x.shape
    h = x @ w
    peak = jnp.max(h, axis=-1, initial=CFG.floor) + CFG.eps
    heads = h.reshape(B, L, CFG.heads, -1)
    if CFG.gated:
        heads = heads * jax.nn.sigmoid(heads)
    return peak, jnp.sum(heads, axis=-1) / (CFG.eps + 1.0)


def inputs():
    rng = np.random.default_rng(407)
    return rng.standard_normal((4, 6, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32) * 0.3
