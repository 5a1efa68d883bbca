"""An attack on session 35's rules as a user writes them: one helper shared by @mesh functions on a 2x4 and a 1x8 mesh
(nanargmax with an all-NaN row, flat argmin, logsumexp(b=, return_sign=True) of a module-level hinted array,
at[ids].get(mode="clip") of ids -1, -20, 40, nancumsum, optax.safe_softmax_cross_entropy), a jax.jit helper with
jnp.column_stack, float16 inputs holding a NaN."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2

SCALE: Tensor["vocab"] = np.linspace(0.5, 1.5, 16).astype(np.float32)


def stats(x, table, ids):
    a = jnp.nanargmax(jnp.where(x > 1.0, jnp.nan, x), axis=-1)
    b = jnp.argmin(x)
    lse, sign = jax.nn.logsumexp(x * SCALE, axis=-1, b=x, return_sign=True)
    rows = table.at[ids].get(mode="clip")
    c = jnp.nancumsum(jnp.where(x < -1.0, jnp.nan, x), axis=1)
    loss = optax.safe_softmax_cross_entropy(x, jax.nn.softmax(x * 0.5))
    return a, b, sign * lse + loss + rows.sum(-1), c


@functools.partial(jax.jit)
def wrapped(x):
    return jnp.column_stack([x.sum(-1), x.max(-1)])


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(x: Tensor["batch", "vocab"], table: Tensor["vocab", "d"], ids: Tensor["batch"]):
    a, b, s, c = stats(x, table, ids)
    return a, b, s, c, wrapped(x)


@mesh(model=8, rules={"vocab": "model", "batch": None})
def g(x: Tensor["batch", "vocab"], table: Tensor["vocab", "d"], ids: Tensor["batch"]):
    a, b, s, c = stats(x, table, ids)
    return a, b, s, c, wrapped(x)


def inputs():
    rng = np.random.default_rng(3599)
    x = rng.standard_normal((4, 16)).astype(np.float16)
    x[1, :] = 2.0  # a row all NaN in nanargmax
    x[2, 5] = np.nan
    table = rng.standard_normal((16, 3)).astype(np.float16)
    ids = np.array([-1, -20, 15, 40], np.int32)
    return {"f": (x, table, ids), "g": (x, table, ids)}
