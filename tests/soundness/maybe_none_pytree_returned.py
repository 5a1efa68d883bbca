"""A ``@mesh`` function returning ``outs.get(k)`` of a dict of dicts whose keys are known only when traced: a dict
of arrays or None, known only when traced.  An array or None leaves with its array's out_spec (a PartitionSpec is
a pytree prefix of None); a dict's out_specs ({"h": P(...), "g": P(...)}) are not a prefix of None, and which
one a call needs is known only when traced.  Refused where it is returned, with a fix (test it, return its
arrays)."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], key: str = "l1"):
    outs = {}
    for i in range(ws.shape[0]):
        h = jax.nn.relu(x @ ws[i])
        outs[f"l{i}"] = {"h": h, "g": h * 2.0}
    last = outs.get(key)
    return x, last


def inputs():
    rng = np.random.default_rng(4217)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((3, 8, 16)).astype(np.float32))
