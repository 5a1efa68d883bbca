"""Reductions of a mapped pytree, as an L2 penalty or a dot product of two parameter trees is written:
``jax.tree_util.tree_reduce(operator.add, jax.tree.map(jnp.sum, p))``, ``jax.tree.map`` of two trees of the same
fields with a lambda, a map of a map, ``jax.tree.reduce`` with a lambda over a map, ``optax.tree_utils.tree_sum`` of
a map; each leaf's sum partial over 'model' where it reduces the split 'f', added to terms partial over 'data'.
Written out leaf by leaf (one psum of the sum). Before: "cannot infer the dims of '1e-2 * total'" (the map was
passed through as a replicated value of unknown dims, which a partial sum cannot be added to). A reduction inside an
operation (``jax.tree.reduce(...) / 32``) was written without its parentheses (``a.sum() + b.sum() / 32``): wrong
numbers."""
import operator
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from meshify import Tensor, mesh

EXPECT = "match"


class P(NamedTuple):
    w1: Tensor["d", "f"]
    b: Tensor["f"]
    w2: Tensor["f", "d"]


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def f(p: P, q: P, x: Tensor["batch", "d"]):
    total = jax.tree_util.tree_reduce(operator.add, jax.tree.map(jnp.sum, p))
    dot = jax.tree_util.tree_reduce(operator.add, jax.tree.map(lambda a, c: jnp.sum(a * c), p, q))
    squares = jax.tree.reduce(lambda acc, s: acc + s, jax.tree.map(lambda a: (a ** 2).sum(), q), 0.0)
    col = optax.tree_utils.tree_sum(jax.tree.map(lambda a: jnp.sum(jnp.tanh(a)), p))
    nested = jax.tree.reduce(operator.add, jax.tree.map(jnp.sum, jax.tree.map(lambda a: a * a, q)))
    quotient = jax.tree.reduce(lambda acc, s: acc + jnp.sum(s), p, 0.0) / 32 - optax.tree_utils.tree_sum(q) * 3
    out = jnp.tanh(x @ p.w1 + p.b) @ q.w2
    return jnp.mean(out ** 2) + 1e-2 * total + 1e-3 * dot * squares - col / 7 + nested / 9 + quotient


def inputs():
    rng = np.random.default_rng(82)
    shapes = ((4, 8), (8,), (8, 4))
    return (P(*(rng.standard_normal(s).astype(np.float32) for s in shapes)),
            P(*(rng.standard_normal(s).astype(np.float32) for s in shapes)),
            rng.standard_normal((4, 4)).astype(np.float32))
