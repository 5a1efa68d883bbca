"""A bfloat16 partial sum formed in float32 (a helper's einsum over the split batch) stored in a NamedTuple the
function builds, then read back by its field (``p.a``) and by ``jax.tree.leaves(p)``: completed where the
NamedTuple is built, where its dtype is known.  Before, read back as ``p.a`` its psum had no ``like=`` and the result
came back float32 where the reference is bfloat16 (a silent dtype change, found by the fuzzer with the leaves
penalty; pre-existing for any field read)."""
import typing

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 3e-2


class Pair(typing.NamedTuple):
    a: jax.Array
    b: jax.Array


def helper(v0, x1):
    return jnp.einsum("d,xd->x", v0, x1)


@mesh(model=8, rules={"batch": "model"})
def f(x0: Tensor["batch"], x1: Tensor["seq", "batch"]):
    xb, x1b = x0.astype(jnp.bfloat16), x1.astype(jnp.bfloat16)
    p = Pair(a=helper(xb, x1b), b=xb)
    return jnp.tanh(p.a), sum(jnp.vdot(q, q) for q in jax.tree.leaves(p)) / 20


def inputs():
    rng = np.random.default_rng(107)
    return rng.standard_normal(16).astype(np.float32), (rng.standard_normal((4, 16)) / 4).astype(np.float32)
