"""``jax.tree.map`` of a function rather than a lambda (``jnp.zeros_like``, ``jnp.add``, ``jnp.maximum``) over a
NamedTuple of parameters split over the hidden dim: walked as the lambda calling it, kept as written where no
leaf needs other code.  Before, "with a function other than a lambda" (the CLIP attack: rewritten as lambdas)."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class P(NamedTuple):
    w: Tensor["d", "ff"]
    b: Tensor["ff"]


@mesh(batch=2, model=4, rules={"ff": "model"})
def f(p: P, q: P, x: Tensor["batch", "d"]):
    z = jax.tree.map(jnp.zeros_like, p)
    s = jax.tree.map(jnp.add, p, q)
    m = jax.tree.map(jnp.maximum, s, z)
    return jnp.sum(jax.nn.relu(x @ m.w + m.b)), jax.tree.map(jnp.negative, m)


def inputs():
    rng = np.random.default_rng(67)

    def p():
        return P(rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32))

    return p(), p(), rng.standard_normal((4, 4)).astype(np.float32)
