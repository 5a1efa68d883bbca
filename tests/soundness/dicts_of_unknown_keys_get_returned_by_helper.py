"""A helper returning ``d.get("zz")`` of a dict of keys known only when traced: an array or None, which only the
trace knows; its caller would take it for an array and decide ``if a is None:`` while rewriting (the branch the
trace takes kept unrewritten).  Refused in the helper, with a fix (read it by key, or give a default)."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


def _first(d):
    return d.get("zz"), 1.0


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for i in range(ws.shape[0]):
        outs[f"l{i}"] = jax.nn.relu(x @ ws[i])
    a, _ = _first(outs)
    if a is None:
        return x
    return a @ wo[0]


def inputs():
    rng = np.random.default_rng(4213)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((3, 8, 16)).astype(np.float32),
            rng.standard_normal((3, 16, 8)).astype(np.float32))
