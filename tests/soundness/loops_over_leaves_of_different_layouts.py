"""Python loops over items of different layouts, as hand-written training code writes them: an L2 penalty
``for q in jax.tree.leaves(params)``, layers ``for w in (p.w1, p.w2)``, ``enumerate`` of the leaves (and of a
``zip`` with a mask's) in a comprehension, a parameter count ``sum(q.size for q in ...)``, an SGD step over ``zip`` of the leaves and the
gradients' leaves filled back by ``jax.tree.unflatten`` (of ``jax.tree.flatten``'s and ``jax.tree.structure``'s
treedef), dict params (their leaves in sorted key order).  Before: "a Python loop over a tuple whose items have
different layouts", ``jax.tree.flatten`` refused on split leaves, and ``q.size`` a NameError in the generated
code (the unrolled comprehension left the attribute's root unreplaced)."""
from typing import NamedTuple, TypedDict

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class P(NamedTuple):
    w1: Tensor["d", "f"]
    w2: Tensor["f", "d"]
    b: Tensor["f"]


class D(TypedDict):
    up: Tensor["d", "f"]
    bias: Tensor["f"]
    down: Tensor["f", "d"]


def loss(p, x):
    return jnp.mean(jnp.tanh(x @ p.w1 + p.b) @ p.w2)


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def penalties(p: P, x: Tensor["batch", "d"]):
    total = 0.0
    for q in jax.tree.leaves(p):
        total = total + jnp.sum(q ** 2)
    h = x
    for w in (p.w1, p.w2):
        h = jnp.tanh(h @ w)
    stats = {}
    for name, w in (("w1", p.w1), ("w2", p.w2)):  # (pairs: each position a column)
        stats[name] = jnp.sum(w ** 2)
    total = total + stats["w1"] * 0.5 + sum(jnp.mean(w) * k for k, w in [(1.0, p.w1), (2.0, p.b)])
    weighted = sum(jnp.sum(jnp.abs(q)) * (i + 1) for i, q in enumerate(jax.tree.leaves(p), 1))
    count = sum(q.size for q in jax.tree.leaves(p))
    mask = jax.tree.map(lambda q: q.ndim > 1, p)
    masked = sum(jnp.sum(q) * i for i, (q, m) in enumerate(zip(jax.tree.leaves(p), jax.tree.leaves(mask))) if m)
    return total + weighted / count + jnp.mean(h) + masked


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def sgd(p: P, x: Tensor["batch", "d"]):
    g = jax.grad(loss)(p, x)
    leaves, treedef = jax.tree.flatten(p)
    new = []
    for a, b in zip(leaves, jax.tree.leaves(g)):
        new.append(a - 0.1 * b)
    again = jax.tree.unflatten(jax.tree.structure(p), [q * 2.0 for q in jax.tree.leaves(p)])
    halved = treedef.unflatten([q / 2 for q in leaves])  # (the treedef's method)
    return jax.tree.unflatten(treedef, new), again, halved


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def by_keys(p: D, x: Tensor["batch", "d"]):
    parts = []
    for q in jax.tree.leaves(p):  # (bias, down, up: sorted keys)
        parts.append(jnp.sum(q, axis=0))
    return jnp.mean(jnp.tanh(x @ p["up"] + p["bias"]) @ p["down"]) + jnp.sum(parts[0] * parts[2]) + jnp.sum(parts[1])


def inputs():
    rng = np.random.default_rng(73)
    w1, w2, b = (rng.standard_normal(s).astype(np.float32) for s in ((4, 8), (8, 4), (8,)))
    x = rng.standard_normal((4, 4)).astype(np.float32)
    return {"penalties": (P(w1, w2, b), x), "sgd": (P(w1, w2, b), x),
            "by_keys": ({"up": w1, "bias": b, "down": w2}, x)}
