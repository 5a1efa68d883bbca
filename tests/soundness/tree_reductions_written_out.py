"""Reductions over a pytree's leaves, as training code writes an L2 penalty or a count: ``jax.tree.reduce`` with a
lambda and an initializer, ``jax.tree_util.tree_reduce(operator.add, sums)`` over ``jax.tree.map(jnp.sum, p)``, and
``optax.tree_utils.tree_sum``; written out leaf by leaf in JAX's order (checked first), each leaf in its own layout.
Before: "has no meshify rule" (attack on parameter containers; its fix named 'operator' as a value)."""
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
def f(p: P, x: Tensor["batch", "d"]):
    l2 = jax.tree.reduce(lambda acc, q: acc + jnp.sum(q ** 2), p, 0.0)
    total = jax.tree_util.tree_reduce(operator.add, jax.tree.map(jnp.sum, p))
    summed = optax.tree_utils.tree_sum(p)
    out = jnp.tanh(x @ p.w1 + p.b) @ p.w2
    return jnp.mean(out ** 2) + 1e-3 * l2 + 1e-2 * total * summed


def inputs():
    rng = np.random.default_rng(81)
    return (P(*(rng.standard_normal(s).astype(np.float32) for s in ((4, 8), (8,), (8, 4)))),
            rng.standard_normal((4, 4)).astype(np.float32))
