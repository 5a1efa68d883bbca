"""``jax.vmap`` of a function calling an op meshify has no rule for (``jnp.linalg.qr``) on rows it sees whole,
mapped along the split batch: with the row's dims named (a return hint on the ``@jax.vmap`` helper, a hinted
name in a nested def) each device's rows are its block of the result.  Unnamed, it is refused (it was taken as
one whole value: shard_map then refused the out_specs with a raw JAX error).  ``h``: mapped along a dim split
over no axis, the unnamed result is whole on every device."""
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 1e-4


@jax.vmap
def row_dec(u) -> Tensor["length", "length"]:
    return jnp.linalg.qr(u @ u.T + 4.0 * jnp.eye(u.shape[0]))[0]


@mesh(batch=2, model=4)
def f(x: Annotated[jax.Array, "batch", "length", "d_model"]):
    return row_dec(x)


@mesh(batch=8)
def g(x: Annotated[jax.Array, "batch", "length", "d_model"]):
    def row(u):
        q: Tensor["length", "length"] = jnp.linalg.qr(u @ u.T + 4.0 * jnp.eye(u.shape[0]))[0]
        return q
    return jax.vmap(row)(x)


@mesh(batch=2, model=4, rules={"batch": None, "d_model": "model"})
def h(x: Annotated[jax.Array, "batch", "length", "d_model"]):
    def row(u):
        return jnp.linalg.qr(jnp.ones((3, 3)) + jnp.eye(3))[0] + 1
    m: Tensor["batch", "r", "c"] = jax.vmap(row)(x)
    return m.sum() + x.sum()


def inputs():
    x = np.random.default_rng(241).standard_normal((8, 4, 8)).astype(np.float32)
    return {"f": (x,), "g": (x,), "h": (x,)}
