"""A helper returning ``d.get(k)`` of a dict of keys known only when traced: an array or None, which only the
trace knows.  Was refused in the helper ("an array or None known only when traced ... is returned by _first()");
now its caller gets an array or None too, and ``if a is None:`` keeps both branches (each rewritten), for a key
that is not there (``f``: None when traced) and one that is (``g``)."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def _first(d, k):
    return d.get(k), 1.0


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for i in range(ws.shape[0]):
        outs[f"l{i}"] = jax.nn.relu(x @ ws[i])
    a, _ = _first(outs, "zz")
    if a is None:
        return x @ ws[0] @ wo[1]
    return a @ wo[0]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def g(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for i in range(ws.shape[0]):
        outs[f"l{i}"] = jax.nn.relu(x @ ws[i])
    a, _ = _first(outs, "l1")
    if a is None:
        return x @ ws[0] @ wo[1]
    return a @ wo[0]


def inputs():
    rng = np.random.default_rng(4213)
    args = (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((3, 8, 16)).astype(np.float32),
            rng.standard_normal((3, 16, 8)).astype(np.float32))
    return {"f": args, "g": args}
