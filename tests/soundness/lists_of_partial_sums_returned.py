"""Lists whose items meshify completes where they leave (partial sums over a split dim) come back lists: a list
comprehension over leaves of different layouts, ``list(...)`` of a generator, a list literal bound to a name, a
list grown by ``+`` and by ``append``; tuples stay tuples.  Before: a list comprehension's items were completed into
a tuple (``(lambda r: (mr.psum(r[0]), ...))(s)``), a silent change of the result's structure (attack, session 27);
and lists a helper returns (session 28's attack)."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class P(NamedTuple):
    w1: Tensor["d", "f"]
    w2: Tensor["f", "d"]


@mesh(data=2, model=4, rules={"f": "model", "batch": "data"})
def comprehension(p: P, x: Tensor["batch", "d"]):
    s = [jnp.sum(q * q) for q in jax.tree.leaves(p)]
    return s


@mesh(data=2, model=4, rules={"f": "model", "batch": "data"})
def listed(p: P, x: Tensor["batch", "d"]):
    s = list(jnp.sum(q) for q in (p.w1, p.w2))
    t = tuple(jnp.sum(q) for q in (p.w1, p.w2))
    return s, t


@mesh(data=2, model=4, rules={"f": "model", "batch": "data"})
def literal(p: P, x: Tensor["batch", "d"]):
    h = x @ p.w1
    s = [jnp.sum(h, axis=1), (h @ p.w2).sum()]
    more = s + [jnp.mean(h)]
    return more


@mesh(data=2, model=4, rules={"f": "model", "batch": "data"})
def appended(p: P, x: Tensor["batch", "d"]):
    out = []
    for q in jax.tree.leaves(p):
        out.append(jnp.sum(q * 2.0))
    pair = (jnp.sum(p.w1), jnp.max(p.w2))
    return out, pair


@mesh(data=2, model=4, rules={"f": "model", "batch": "data"})
def returned_literal(p: P, x: Tensor["batch", "d"]):
    """A list literal returned with a partial sum in it (was refused: the dtype of '[...][1]' unknown)."""
    return [x, x @ p.w1 @ p.w2]


def block(x, w1, w2):
    h = jax.nn.relu(x @ w1)
    return [x + h @ w2, jnp.sum(h)]


@jax.checkpoint
def checkpointed(x, w1, w2):
    h = jax.nn.relu(x @ w1)
    return [x + h @ w2, jnp.sum(h)]


@mesh(data=2, model=4, rules={"f": "model", "batch": "data"})
def from_helpers(p: P, x: Tensor["batch", "d"]):
    """Lists returned by helpers (plain, checkpointed, nested), a partial sum among their items (attack)."""
    @jax.checkpoint
    def nested(x, w1, w2):
        h = x @ w1
        return [jnp.sum(h), h @ w2]

    out = block(x, p.w1, p.w2)
    return out, checkpointed(x, p.w1, p.w2), nested(x, p.w1, p.w2)


def inputs():
    rng = np.random.default_rng(5)
    p = P(rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 4)).astype(np.float32))
    x = rng.standard_normal((4, 4)).astype(np.float32)
    return {name: (p, x) for name in ("comprehension", "listed", "literal", "appended", "from_helpers",
                                           "returned_literal")}
