"""``m if m is not None else jnp.ones((4, 16))``, ``m`` an array split over 'batch' and 'model' set under a config flag
(``if cfg.use_m: m = x * 2``) and the other arm an array of dims meshify cannot name (a literal shape): taken as whole
of ``m``'s dims and sliced locally to ``m``'s blocks (no communication; gathering ``m`` would move its blocks), read
in an elementwise op and returned; both values of the flag, and a partial sum in the named arm (completed there).
Before: refused ("the branches of this conditional expression have different layouts")."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    use_m: bool = True


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], cfg: Config = Config()):
    m = None
    if cfg.use_m: m = x * 2
    s = m if m is not None else jnp.ones((4, 16))
    return jnp.sin(x * s), s


@mesh(batch=2, model=4, rules={"d": "model"})
def f_off(x: Tensor["batch", "d"], cfg: Config):
    m = None
    if cfg.use_m: m = x * 2
    s = m if m is not None else jnp.ones((4, 16))
    return jnp.sin(x * s), s


@mesh(batch=2, model=4, rules={"d": "model"})
def partial(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    m = x @ w if flag else None
    s = jnp.full((4, 6), 0.5) if m is None else m
    return jnp.tanh(s) * 3.0


def inputs():
    rng = np.random.default_rng(3603)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    w = (rng.standard_normal((16, 6)) / 4).astype(np.float32)
    return {"f": (x,), "f_off": (x, Config(use_m=False)), "partial": (x, w, True)}
