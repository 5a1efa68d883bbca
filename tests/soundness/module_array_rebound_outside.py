"""Module-level arrays (a hinted table, a hinted scalar, an unhinted weight read whole) rebound from outside
the module between two calls (``mod.TABLE = ...``).  The first call's trace baked the arrays it read into the
program, and the program was cached on the arguments alone: later calls kept reading the old arrays while
``.reference`` read the new ones (wrong numbers, no error).  The program is now keyed on the identity of each
module variable that may hold an array, so a call after a rebinding traces again; a helper's reads count."""
import jax.numpy as jnp
import numpy as np

import tests.soundness._tables as tables
from meshify import Tensor, mesh
from tests.soundness._tables import TABLE as IMPORTED

EXPECT = "match"

TABLE: Tensor["n"] = jnp.arange(16.0)
SCALE: Tensor[()] = jnp.float32(2.0)
W = jnp.ones((4, 4))


def shifted(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x + TABLE[:8]


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return shifted(x) * SCALE + jnp.sum(W)


@mesh(batch=2, model=4, rules={"d": "model"})
def imported(x: Tensor["batch", "d"]):
    """Arrays of another module: read as its attribute, and bound by a from-import (each rebound from outside)."""
    t: Tensor["n"] = tables.TABLE
    u: Tensor["n"] = IMPORTED
    return x * t[:8] + u[8:]


def scenario(mod, pick):
    (x,) = inputs()
    table, scale, w, imported = mod.TABLE, mod.SCALE, mod.W, mod.IMPORTED
    try:
        first = pick(mod.f)(x)
        mod.TABLE = jnp.arange(16.0) * 10
        second = pick(mod.f)(x)
        mod.SCALE = jnp.float32(-3.0)
        third = pick(mod.f)(x)
        mod.W = jnp.full((4, 4), 0.5)
        fourth = pick(mod.f)(x)
        before = pick(mod.imported)(x)
        tables.TABLE = jnp.arange(16.0) * -2
        mod.IMPORTED = jnp.full((16,), 3.0)
        return first, second, third, fourth, before, pick(mod.imported)(x)
    finally:
        mod.TABLE, mod.SCALE, mod.W, mod.IMPORTED = table, scale, w, imported
        tables.TABLE = jnp.arange(16.0)


def inputs():
    return (np.random.default_rng(118).standard_normal((4, 8)).astype(np.float32),)
