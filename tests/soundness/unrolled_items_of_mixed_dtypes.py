"""Unrolled comprehensions over leaves of different dtypes (bfloat16 weights beside a float32 bias): each item's
partial sum completed in its own dtype (list, enumerate, sorted dict items, dict comprehension).  Before: every
item took the dtype of all items together (float32; attack on today's features)."""
from typing import TypedDict, NamedTuple
import jax, jax.numpy as jnp, numpy as np
from meshify import Tensor, mesh
EXPECT = "match"
TOL = 2e-2

class Params(TypedDict):
    up: Tensor["d", "f"]
    bias: Tensor["f"]

class P(NamedTuple):
    w1: Tensor["d", "f"]
    b: Tensor["f"]

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def comp(p: P, x: Tensor["batch", "d"]):
    sq = [jnp.sum(q) for q in jax.tree.leaves(p)]
    return sq[0], sq[1]

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def comp_enum(p: P, x: Tensor["batch", "d"]):
    sq = [jnp.sum(q) * i for i, q in enumerate(jax.tree.leaves(p))]
    return sq[0], sq[1]

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def appended(p: P, x: Tensor["batch", "d"]):
    out = []
    for q in jax.tree.leaves(p):
        out.append(jnp.sum(q))
    return out[0], out[1]

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def dcomp(params: Params, x: Tensor["batch", "d"]):
    s = {k: jnp.sum(v) for k, v in params.items()}
    return s

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def sorted_items(params: Params, x: Tensor["batch", "d"]):
    s = [jnp.sum(v) for k, v in sorted(params.items())]
    return s[0], s[1]

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def tuple_lit(p: P, x: Tensor["batch", "d"]):
    s = [jnp.sum(w) for w in (p.w1, p.b)]
    return s[0], s[1]

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def norms(p: P, x: Tensor["batch", "d"]):
    s = [jnp.linalg.vector_norm(w) for w in (p.w1, p.b)]
    return s[0], s[1]

def inputs():
    rng = np.random.default_rng(30)
    w = jnp.asarray(rng.standard_normal((4, 8)), jnp.bfloat16)
    b = jnp.asarray(rng.standard_normal((8,)), jnp.float32)
    x = rng.standard_normal((4, 4)).astype(np.float32)
    return {"comp": (P(w, b), x), "comp_enum": (P(w, b), x), "appended": (P(w, b), x),
            "dcomp": ({"up": w, "bias": b}, x), "sorted_items": ({"up": w, "bias": b}, x),
            "tuple_lit": (P(w, b), x), "norms": (P(w, b), x)}
