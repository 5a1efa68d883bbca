"""Unrolled loops whose body rebinds what the items are read from (`p = jax.tree.map(...)` inside `for q in
jax.tree.leaves(p)`, `leaves = [...]` inside `for q in leaves`, zip with appends, `p._replace(...)`, sorted dict
items): Python reads the iterable once, before the first iteration, so the items are read into a tuple first.
Before: each copy of the body read its item after the earlier copies had rebound the names (wrong numbers, both
paths; attack on today's features)."""
from typing import NamedTuple
import jax, jax.numpy as jnp, numpy as np
from meshify import Tensor, mesh
EXPECT = "match"

class P(NamedTuple):
    w1: Tensor["d", "f"]
    w2: Tensor["f", "d"]
    b: Tensor["f"]

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def leaves_rebound(p: P, x: Tensor["batch", "d"]):
    total = 0.0
    for q in jax.tree.leaves(p):
        total = total + jnp.sum(q)
        p = jax.tree.map(lambda a: a * 2.0, p)
    return total, p

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def tuple_rebound(p: P, x: Tensor["batch", "d"]):
    total = 0.0
    for w in (p.w1, p.w2):
        total = total + jnp.sum(w)
        p = P(p.w1 * 10.0, p.w2 * 10.0, p.b)
    return total

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def list_rebound(p: P, x: Tensor["batch", "d"]):
    leaves = jax.tree.leaves(p)
    total = 0.0
    for q in leaves:
        total = total + jnp.sum(q)
        leaves = [l * 3.0 for l in leaves]
    return total

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def zip_rebound(p: P, x: Tensor["batch", "d"]):
    leaves, tdef = jax.tree.flatten(p)
    g = jax.tree.leaves(jax.tree.map(lambda a: a * 0.5, p))
    new = []
    for a, b in zip(leaves, g):
        new.append(a - b)
        g = [q * 0.0 for q in g]
    return jax.tree.unflatten(tdef, new)

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def attr_rebound(p: P, x: Tensor["batch", "d"]):
    h = x
    for w in (p.w1, p.w2):
        h = jnp.tanh(h @ w)
        p = p._replace(w2=p.w2 * 100.0)
    return h

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def comp_uses_rebound(p: P, x: Tensor["batch", "d"]):
    total = 0.0
    for i, q in enumerate(jax.tree.leaves(p)):
        total = total + jnp.sum(q) * (i + 1)
        i = 10
    return total

def inputs():
    rng = np.random.default_rng(67)
    p = P(rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 4)).astype(np.float32),
          rng.standard_normal((8,)).astype(np.float32))
    x = rng.standard_normal((4, 4)).astype(np.float32)
    return {k: (p, x) for k in ("leaves_rebound", "tuple_rebound", "list_rebound", "zip_rebound", "attr_rebound", "comp_uses_rebound")}
