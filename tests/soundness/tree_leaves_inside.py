"""``jax.tree.leaves`` inside the @mesh function, as training code writes a weight penalty: ``sum(jnp.sum(p ** 2)
for p in jax.tree.leaves(params))`` (unrolled leaf by leaf: each its own layout), ``jax.tree_util.tree_leaves``
held in a name with ``jnp.vdot(q, q)`` and ``len``, and a TypedDict's leaves read by index (JAX sorts a dict's keys:
``leaves[0]`` is ``"b"``; ``mr.tree_leaves`` checks the order when the function runs).  Before, "jax.tree.leaves has
no meshify rule" with a fix dropping model parallelism."""
from typing import NamedTuple, TypedDict

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class P(NamedTuple):
    w: Tensor["d", "d_ff"]
    b: Tensor["d_ff"]


class D(TypedDict):
    w: Tensor["d", "d_ff"]
    b: Tensor["d_ff"]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def penalty(p: P, x: Tensor["batch", "d"]):
    loss = jnp.mean(jnp.tanh(x @ p.w + p.b))
    return loss + 1e-2 * sum(jnp.sum(q ** 2) for q in jax.tree.leaves(p))


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def held(p: P, d: D):
    leaves = jax.tree_util.tree_leaves(p)
    first = jax.tree.leaves(d)[0]
    return sum(jnp.vdot(q, q) for q in leaves) / len(leaves), first * 2.0, jax.tree.leaves(d)[1].sum(axis=0)


class Mixed(NamedTuple):
    w: Tensor["d", "d_ff"]
    scale: Tensor["d"]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def mixed_bf16(p: Mixed):
    # leaves split differently (one over 'model', one whole): each term completed in its place, in bfloat16
    q = jax.tree.map(lambda t: t.astype(jnp.bfloat16), p)
    return sum(jnp.sum(t * t) for t in jax.tree.leaves(q))


TOL = 2e-2


def inputs():
    rng = np.random.default_rng(73)
    p = P(rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32))
    d = {"w": rng.standard_normal((4, 8)).astype(np.float32), "b": rng.standard_normal(8).astype(np.float32)}
    mixed = Mixed(rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal(4).astype(np.float32))
    return {"penalty": (p, rng.standard_normal((4, 4)).astype(np.float32)), "held": (p, d), "mixed_bf16": (mixed,)}
