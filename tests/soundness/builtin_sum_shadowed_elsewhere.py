"""One function binds a local named sum; another uses Python's sum() of partial sums (over 'data' and
'model', from reductions over split dims): the local name must not hide the builtin from the other, and
builtins.sum spelled out is the same function."""
import builtins

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def scaled_total(terms):
    sum = 0.0  # noqa: A001 - a local that shadows the builtin, in this helper only
    for t in terms:
        sum = sum + t * 0.5
    return sum


@mesh(data=2, model=4, rules={"batch": "data", "d": "model", "e": "data"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "h"], y: Tensor["e", "d"], v: Tensor["d", "h"]) -> Tensor["h"]:
    return (sum([jnp.sum(x @ w, axis=0), jnp.sum(y @ v, axis=0)])
            + builtins.sum((jnp.sum(x @ w, axis=0),), jnp.sum(y @ v, axis=0)))


def inputs():
    rng = np.random.default_rng(131)
    return tuple(rng.standard_normal(s).astype(np.float32) for s in ((4, 8), (8, 4), (6, 8), (8, 4)))
