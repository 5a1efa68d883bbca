"""A ``where=`` mask built from a size meshify cannot read (``jnp.arange(cfg.n) < cfg.k``, an inferred dim
``n?``) beside a split batch: the mask takes the batch's split, its size checked when traced against the
batch's.  Called with the sizes equal (a match: sum and mean over the split batch) and with n twice the
batch (the reference fails to broadcast; the sharded call must refuse, not return numbers).  Before, the
mask was refused ("a mask of dims ['n?', 1] beside ['batch', 'd']")."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False


class Cfg(NamedTuple):
    n: int = 8
    k: int = 5


@mesh(batch=8)
def f(x: Tensor["batch", "d"], cfg: Cfg = Cfg()) -> Tensor["d"]:
    keep = (jnp.arange(cfg.n) < cfg.k)[:, None]
    return jnp.sum(x, axis=0, where=keep) + jnp.mean(x, axis=0, where=keep)


def scenario(mod, pick):
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    out = pick(mod.f)(x)
    try:
        pick(mod.f)(x, mod.Cfg(n=16))
        refused = False
    except Exception:  # noqa: BLE001 - the reference's ValueError, the sharded call's CallError
        refused = True
    return out, np.asarray(refused)


def inputs():
    return (np.arange(32, dtype=np.float32).reshape(8, 4),)
