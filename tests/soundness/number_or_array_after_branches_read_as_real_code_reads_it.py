"""A Python number after one branch of an if and an array of named dims after the other, as real code writes it
(``s = 1.0``, ``if cfg.use_m: s = x * 2``; ``if flag: s = jnp.tanh(x)`` / ``else: s = 0.5``): a number or an array
known only when traced, read in a comparison, ``jnp.where``, ``*``, ``**`` and returned; a partial sum in the array's
branch (``if flag: s = x @ w``) completed at the end of that branch.  Both values of each flag.  Before: refused
("'s' has layout [batch/'batch', d/'model'] after one branch and a Python value after the other")."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    use_m: bool = True


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], cfg: Config = Config()):
    s = 1.0
    if cfg.use_m: s = x * 2
    y = jnp.where(s > 0.5, x, -x) * s
    return y, s


@mesh(batch=2, model=4, rules={"d": "model"})
def f_off(x: Tensor["batch", "d"], cfg: Config):
    s = 1.0
    if cfg.use_m: s = x * 2
    y = jnp.where(s > 0.5, x, -x) * s
    return y, s


@mesh(batch=2, model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], flag):
    if flag:
        s = jnp.tanh(x)
    else:
        s = 0.5
    return x ** s


@mesh(batch=2, model=4, rules={"d": "model"})
def g_on(x: Tensor["batch", "d"], flag):
    if flag:
        s = jnp.tanh(x)
    else:
        s = 0.5
    return x ** s


@mesh(batch=2, model=4, rules={"d": "model"})
def h(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    s = 2.0
    if flag: s = x @ w
    return jnp.sin(x @ w) * s + s ** 2


@mesh(batch=2, model=4, rules={"d": "model"})
def h_off(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    s = 2.0
    if flag: s = x @ w
    return jnp.sin(x @ w) * s + s ** 2


def inputs():
    rng = np.random.default_rng(3606)
    x = (np.abs(rng.standard_normal((8, 16))) + 0.1).astype(np.float32)
    w = (rng.standard_normal((16, 6)) / 4).astype(np.float32)
    return {"f": (x,), "f_off": (x, Config(use_m=False)), "g": (x, False), "g_on": (x, True), "h": (x, w, True),
            "h_off": (x, w, False)}
