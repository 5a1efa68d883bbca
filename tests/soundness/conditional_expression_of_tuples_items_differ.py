"""A conditional expression choosing between tuples whose items have different layouts, ``a, b = (h, x) if swap else
(x, h)``, ``h = jnp.tanh(x @ w) @ v`` a partial sum over 'model' and ``x`` whole along 'd': each item joined as two
arrays are (the partial sum completed, a dim split in one arm and whole in the other kept split, the whole arm
sliced locally: ``(x, jnp.ones((8, 5)))``), on a config field (``cfg.swap``, its default and the other value passed),
on a flag known only when traced (both values), on a module constant; and the fix meshify gives for a flag traced
on device (jnp.where per item), which runs.  Before: refused ("the branches of this conditional expression have
different layouts")."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
SWAP = False


class Config(NamedTuple):
    swap: bool = True


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], cfg: Config = Config()):
    h = jnp.tanh(x @ w) @ v
    a, b = (h, x) if cfg.swap else (x, h)
    return a * 2.0 + jnp.sin(b)


@mesh(batch=2, model=4, rules={"e": "model"})
def f_off(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], cfg: Config):
    h = jnp.tanh(x @ w) @ v
    a, b = (h, x) if cfg.swap else (x, h)
    return a * 2.0 + jnp.sin(b)


@mesh(batch=2, model=4, rules={"e": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], flag):
    h = jnp.tanh(x @ w) @ v
    t = (h, x) if flag else (x, h)
    return t[0] * 2.0 + jnp.sin(t[1])


@mesh(batch=2, model=4, rules={"e": "model"})
def g_on(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], flag):
    h = jnp.tanh(x @ w) @ v
    t = (h, x) if flag else (x, h)
    return t[0] * 2.0 + jnp.sin(t[1])


@mesh(batch=2, model=4, rules={"e": "model"})
def const(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"]):
    h = jnp.tanh(x @ w) @ v
    a, b = [h, x] if SWAP else [x, h]
    return a - jnp.cos(b)


@mesh(batch=2, model=4, rules={"e": "model"})
def ones(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"], flag):
    h = jnp.tanh(x @ w) @ v
    a, b = (h, x) if flag else (x, jnp.ones((8, 5)))
    return a * jnp.sin(b), b


@mesh(batch=2, model=4, rules={"e": "model"})
def where_fix(x: Tensor["batch", "d"], w: Tensor["d", "e"], v: Tensor["e", "d"]):
    h = jnp.tanh(x @ w) @ v
    a, b = (jnp.where(x.mean() > 0, h, x), jnp.where(x.mean() > 0, x, h))
    return a * 2.0 + jnp.sin(b)


def inputs():
    rng = np.random.default_rng(3602)
    x = rng.standard_normal((8, 5)).astype(np.float32)
    w = (rng.standard_normal((5, 16)) / 2).astype(np.float32)
    v = (rng.standard_normal((16, 5)) / 4).astype(np.float32)
    return {"f": (x, w, v), "f_off": (x, w, v, Config(swap=False)), "g": (x, w, v, False), "g_on": (x, w, v, True),
            "const": (x, w, v), "ones": (x, w, v, False), "where_fix": (x, w, v)}
