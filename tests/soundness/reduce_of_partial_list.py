"""An unknown function (functools.reduce with jnp.add) of a list holding partial sums."""
import functools

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], y: Tensor["batch", "d"]) -> Tensor["batch"]:
    parts = [jnp.sum(x, axis=1), jnp.sum(y, axis=1)]
    return functools.reduce(jnp.add, parts)


def inputs():
    rng = np.random.default_rng(46)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((4, 8)).astype(np.float32)
