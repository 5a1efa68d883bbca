"""A whole value of a size meshify cannot read at rewrite time, contracted or lined up in an einsum with a
split dim: ``jnp.arange(cfg.n)`` (an inferred dim ``n?``) and ``jnp.asarray(cfg.w)`` (a tuple of floats:
an array of unknown dims) against a batch split over 8 devices.  Each device takes its block, so a size
that differs from the dim's contracted block against block where one device fails.  Called with the sizes
equal (a match) and with n twice the batch (the reference fails; the sharded call must refuse, not return
numbers).  Before, the einsum returned numbers, and the tuple of floats crashed inside mr.sum_dtype."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False


class Cfg(NamedTuple):
    n: int = 8
    w: tuple = (0.5,) * 8


@mesh(batch=8)
def f(x: Tensor["batch", "d"], cfg: Cfg = Cfg()) -> Tensor["d"]:
    pooled = jnp.einsum("b,bd->d", jnp.arange(cfg.n) * 1.0, x)
    scaled = jnp.einsum("b,bd->bd", jnp.asarray(cfg.w), x)
    return pooled + jnp.sum(scaled, axis=0)


def scenario(mod, pick):
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    out = pick(mod.f)(x)
    refused = []
    for cfg in (mod.Cfg(n=16), mod.Cfg(w=(0.5,) * 16)):
        try:
            pick(mod.f)(x, cfg)
            refused.append(False)
        except Exception:  # noqa: BLE001 - the reference's ValueError, the sharded call's CallError
            refused.append(True)
    return out, np.asarray(refused)


def inputs():
    return (np.arange(32, dtype=np.float32).reshape(8, 4),)
