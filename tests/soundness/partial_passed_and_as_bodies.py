"""``functools.partial`` as public model code passes it: to a helper (``twice(h, partial(mlp, w1, w2))``,
called there twice), as a scan body (``partial(block, scale=0.5)``), a fori_loop body and a cond branch,
over split weights.  Each is walked as the lambda it stands for (``lambda partial_arg0: mlp(w1, w2,
partial_arg0)``), which the written code shows; before, the helper's ``fn(h)`` was "calling local value"
and a partial body "pass a function defined with def"."""
import functools
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def mlp(w1, w2, h):
    return h + jax.nn.relu(h @ w1) @ w2 * 0.5


def twice(h, fn):
    return fn(fn(h))


def block(h, wl, scale):
    return h + scale * jnp.tanh(h @ wl), jnp.sum(h, axis=-1)


def step(i, h, w1, w2):
    return mlp(w1, w2, h) * (1.0 / (i + 1.0))


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"],
      ws: Tensor["layers", "d", "d"]) -> Tensor["batch", "d"]:
    h = twice(x, partial(mlp, w1, w2))
    h, sums = jax.lax.scan(functools.partial(block, scale=0.5), h, ws)
    h = jax.lax.fori_loop(0, 2, partial(step, w1=w1, w2=w2), h)
    h = jax.lax.cond(jnp.sum(x) > 0, partial(mlp, w1, w2), lambda y: y * 2.0, h)
    return h + jnp.mean(sums)


def inputs():
    rng = np.random.default_rng(2201)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32) * 0.3,
            rng.standard_normal((16, 8)).astype(np.float32) * 0.3,
            rng.standard_normal((3, 8, 8)).astype(np.float32) * 0.3)
