"""Lists, tuples and dicts held in names whose items are partial sums of float16/bfloat16 values (accumulated in
float32, cast back after the psum), passed on the ways code passes them (attack, session 29): a dict of metrics
held in a name (returned, read by key, copied with ``dict(m)`` / ``{**m, ...}``); ``tuple(a)`` / ``list(a)``; a
comprehension and ``jax.tree.map`` over a held list; a held list starred into another (``[*a, x]``, which was
read as one item: ``b[1]`` came back as ``x``, tiled).  These came back float32 (or silently wrong); now they keep
their dtype, or are refused where meshify cannot tell it."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=8, rules={"d": "data"})
def metrics(x: Tensor["batch", "d"]):
    m = {"sum": jnp.sum(x), "sq": jnp.sum(x * x)}
    n = {**m, "max": jnp.max(x)}
    return m, m["sum"] * 0.5, dict(m), n


@mesh(data=8, rules={"d": "data"})
def copies(x: Tensor["batch", "d"]):
    a = [jnp.sum(x), jnp.mean(x)]
    t = tuple(a)
    return tuple(a), list(a), t[0] + 1, [v * 2 for v in a], jax.tree.map(lambda v: v - 1, a), jax.tree.leaves(a)


@mesh(data=8, rules={"d": "data"})
def starred(x: Tensor["batch", "d"], w: Tensor["e"]):
    a = [w * 1.0, w * 2.0]
    b = [*a, x]
    c = (*a, jnp.sum(x))
    return b[1], b[2], c[2], [*a, *c]


def inputs():
    rng = np.random.default_rng(97)
    x = rng.standard_normal((2, 16)).astype(np.float16)
    w = rng.standard_normal((4,)).astype(np.float16)
    xb = jnp.asarray(rng.standard_normal((2, 16)), jnp.bfloat16)
    return {"metrics": (x,), "copies": (xb,), "starred": (x, w)}
