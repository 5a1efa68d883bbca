"""An array of a literal shape after one branch of an if (``s = jnp.ones((4, 16))``, dims meshify cannot name) and an
array split over 'batch' and 'model' after the other (``s = x * 2``), then read beside ``x`` and returned: the literal
one taken as whole of the other's dims and sliced locally to its blocks at the end of its branch (no communication),
in either order, on a flag known only when traced (both values) and a config field; an if without an else (the
literal array made before it).  Before: refused ("'s' has layout [batch/'batch', d/'model'] after one branch and an
array of dims meshify cannot infer after the other")."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    use_m: bool = False


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], flag):
    if flag:
        s = x * 2
    else:
        s = jnp.ones((4, 16))
    return jnp.sin(x * s), s


@mesh(batch=2, model=4, rules={"d": "model"})
def f_on(x: Tensor["batch", "d"], flag):
    if flag:
        s = jnp.full((4, 16), 0.5)
    else:
        s = jnp.tanh(x)
    return jnp.sin(x * s), s


@mesh(batch=2, model=4, rules={"d": "model"})
def cfg_field(x: Tensor["batch", "d"], cfg: Config = Config()):
    s = jnp.ones((4, 16)) * 3.0
    if cfg.use_m: s = x * 2
    return jnp.cos(s) * x


def inputs():
    rng = np.random.default_rng(3605)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    return {"f": (x, False), "f_on": (x, True), "cfg_field": (x,)}
