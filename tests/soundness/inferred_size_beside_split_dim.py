"""An array of a size meshify cannot read at rewrite time (``jnp.arange(cfg.n)``, an inferred dim ``n?``)
lined up with a split dim: each device takes its block, so a size that differs from the dim's would let
a block of one entry broadcast where, on one device, the shapes do not.  The scenario calls with the sizes
equal (a match) and with batch twice n (the reference fails to broadcast; the sharded call must refuse, not
return numbers)."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False


class Cfg(NamedTuple):
    n: int = 8


@mesh(batch=8)
def f(x: Tensor["batch", "d"], cfg: Cfg = Cfg()) -> Tensor["batch", "d"]:
    return x * jnp.arange(cfg.n)[:, None]


def scenario(mod, pick):
    out = pick(mod.f)(np.ones((8, 4), np.float32))
    try:
        pick(mod.f)(np.ones((16, 4), np.float32))
        refused = False
    except Exception:  # noqa: BLE001 - the reference's TypeError, the sharded call's CallError
        refused = True
    return out, np.asarray(refused)


def inputs():
    return (np.ones((8, 4), np.float32),)
