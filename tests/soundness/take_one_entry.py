"""``jnp.take(x, 2, axis=1)``: one entry along an unsplit dim, by a literal, a negative literal, a config value
(``mode="clip"``), and out of range (fill: NaN), of values split over batch and d_ff, and of a partial sum (a
pick is linear, so it passes through; with a ``fill_value=`` the sum is completed first, else each device's
fill would be summed); gradients through all.  Before, "jax.numpy.take has no meshify rule" (found by the
second attack)."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Cfg(NamedTuple):
    k: int = 1


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "seq", "d"], w: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"], cfg: Cfg = Cfg()):
    h = x @ w
    a = jnp.take(h, 2, axis=1)
    b = jnp.take(x @ w @ w2, -1, axis=1)
    c = jnp.take(h, cfg.k, axis=1, mode="clip")
    d = jnp.take(h, 9, axis=1)
    e = jnp.take(x @ w @ w2, 9, axis=1, mode="fill", fill_value=1.5)
    return a, b * 2.0, c, jnp.where(jnp.isnan(d), 0.0, d), e


def inputs():
    rng = np.random.default_rng(322)
    return (rng.standard_normal((4, 6, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32) * 0.5,
            rng.standard_normal((16, 8)).astype(np.float32) * 0.5)
