"""``initial=`` spelled as code spells it, not as a literal: ``jnp.max(x, where=m, initial=-jnp.inf)``,
``jnp.min(..., initial=float("inf"))`` and ``jnp.sum(x, initial=cfg.bias)`` over a split length (a row masked
out entirely gives -inf / inf); gradients through x.  Before, "initial=... with an array over split dims" for
what is a Python float (found by the user-style attack)."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Cfg(NamedTuple):
    bias: float = 0.5


@mesh(batch=2, model=4, rules={"length": "model"})
def f(x: Tensor["batch", "length"], m: Tensor["batch", "length"], cfg: Cfg = Cfg()) -> Tensor["batch"]:
    top = jnp.max(x, axis=-1, where=m > 0, initial=-jnp.inf)
    low = jnp.min(x, axis=-1, where=m > 0, initial=float("inf"))
    top = jnp.where(jnp.isfinite(top), top, 0.0)
    low = jnp.where(jnp.isfinite(low), low, 0.0)
    return top - low + jnp.sum(x, axis=-1, initial=cfg.bias)


def inputs():
    rng = np.random.default_rng(314)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    m = (rng.random((4, 8)) > 0.5).astype(np.float32)
    m[1] = 0
    return x, m
