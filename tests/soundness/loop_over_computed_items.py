"""Unrolled loops over a tuple literal of computed items (`for v in (jnp.sum(x @ p.w1), jnp.sum(x), p.b)`) whose
body changes `x`: the items are computed once, before the loop, as Python does.  Before: each was computed where
its copy of the body ran (wrong numbers; attack on today's features)."""
from typing import NamedTuple
import jax, jax.numpy as jnp, numpy as np
from meshify import Tensor, mesh
EXPECT = "match"

class P(NamedTuple):
    w1: Tensor["d", "f"]
    w2: Tensor["f", "d"]
    b: Tensor["f"]

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def expr_items(p: P, x: Tensor["batch", "d"]):
    outs = []
    for h in (x @ p.w1, jnp.tanh(x @ p.w1) @ p.w2):
        x = x * 2.0
        outs.append(jnp.sum(h))
    return outs[0], outs[1]

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def total_items(p: P, x: Tensor["batch", "d"]):
    t = 0.0
    for v in (jnp.sum(x @ p.w1), jnp.sum(x), p.b):
        t = t + jnp.sum(v)
        x = x + 1.0
    return t

@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def comp_walrus(p: P, x: Tensor["batch", "d"]):
    return sum(jnp.sum(v) for v in (x @ p.w1, x))

def inputs():
    rng = np.random.default_rng(68)
    p = P(rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 4)).astype(np.float32),
          rng.standard_normal((8,)).astype(np.float32))
    x = rng.standard_normal((4, 4)).astype(np.float32)
    return {k: (p, x) for k in ("expr_items", "total_items", "comp_walrus")}
