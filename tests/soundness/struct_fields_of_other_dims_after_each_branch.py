"""A NamedTuple the branches of an if on a flag known only when traced leave with a field of other dims
(``S(x @ w, x)`` and ``S(jnp.tanh(jnp.sum(x @ w, axis=0)), x)``): refused, naming the field and both layouts.
Before: the first branch's was kept, whatever the other left, so with the flag off the generated code psummed a
value over an axis it does not vary over (a raw JAX error)."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


class S(NamedTuple):
    a: jax.Array
    b: jax.Array


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], flag):
    if flag:
        t = S(x @ w, x)
    else:
        t = S(jnp.tanh(jnp.sum(x @ w, axis=0)), x)
    return t.a * 2.0 - jnp.mean(t.a)


def inputs():
    rng = np.random.default_rng(1501)
    x = rng.standard_normal((4, 5)).astype(np.float32) - 0.5
    w = (rng.standard_normal((5, 16)) / 3).astype(np.float32)
    return (x, w, False)
