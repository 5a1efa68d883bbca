"""A Python number or an array as a config flag says (``m = None``, ``if cfg.use_m: m = x * 2``, ``s = m if m is not
None else 1.0``) read as real code reads it: in a comparison (``s > 0.5``: an array, or a Python bool), as
``jnp.where``'s condition, in ``x ** s`` and ``s ** 2`` (again a number or an array), in ``jnp.exp(s)``, passed to a
helper (its version rewritten for a number or an array, ``x * s`` in it), and returned, alone and in a tuple (out_specs
``mr.NumberOr(P(...))``: ``P()`` where the call returns the number, a 0-d array as jit gives it).  Both values of the
flag, the default and the other passed.  Before: refused ("'s' is a Python number or an array ..., read where
meshify cannot rewrite it for both")."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    use_m: bool = True


def scaled(s, x):
    return x * s + jnp.tanh(x)


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], cfg: Config = Config()):
    m = None
    if cfg.use_m: m = x * 2
    s = m if m is not None else 1.0
    y = jnp.where(s > 0.5, x, -x) + x ** s + scaled(s, x)
    return y, s


@mesh(batch=2, model=4, rules={"d": "model"})
def f_off(x: Tensor["batch", "d"], cfg: Config):
    m = None
    if cfg.use_m: m = x * 2
    s = m if m is not None else 1.0
    y = jnp.where(s > 0.5, x, -x) + x ** s + scaled(s, x)
    return y, s


@mesh(batch=2, model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"], cfg: Config = Config()):
    m = None
    if cfg.use_m: m = jnp.tanh(x)
    s = m if m is not None else 0.25
    t = s ** 2
    return jnp.exp(t) * x + jnp.where(t <= 0.1, 1.0, 0.0) * x


@mesh(batch=2, model=4, rules={"d": "model"})
def g_off(x: Tensor["batch", "d"], cfg: Config):
    m = None
    if cfg.use_m: m = jnp.tanh(x)
    s = m if m is not None else 0.25
    t = s ** 2
    return jnp.exp(t) * x + jnp.where(t <= 0.1, 1.0, 0.0) * x


@mesh(batch=2, model=4, rules={"d": "model"})
def alone(x: Tensor["batch", "d"], cfg: Config):
    m = None
    if cfg.use_m: m = x * 3.0
    return m if m is not None else 1.0


@mesh(batch=2, model=4, rules={"d": "model"})
def alone_on(x: Tensor["batch", "d"], cfg: Config = Config()):
    m = None
    if cfg.use_m: m = x * 3.0
    return m if m is not None else 1.0


def inputs():
    rng = np.random.default_rng(3604)
    x = (np.abs(rng.standard_normal((8, 16))) + 0.1).astype(np.float32)
    return {"f": (x,), "f_off": (x, Config(use_m=False)), "g": (x,), "g_off": (x, Config(use_m=False)),
            "alone": (x, Config(use_m=False)), "alone_on": (x,)}
