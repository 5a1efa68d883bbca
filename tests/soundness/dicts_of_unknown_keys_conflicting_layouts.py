"""A dict filled at keys meshify does not know while rewriting (``outs[f"h{i}"]``, ``outs[f"x{i}"]`` in a kept
loop) with values of two layouts: the hidden activation split over ``d_ff`` and the residual stream whole along
``d``.  Which key holds which is known only when traced, so one layout cannot stand for every value and no
out_spec fits the returned dict: refused at the second store, naming both layouts and a fix (one layout, two
dicts, or string literal keys)."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for i in range(ws.shape[0]):
        h = jax.nn.relu(x @ ws[i])
        outs[f"h{i}"] = h
        x = x + h @ wo[i]
        outs[f"x{i}"] = x
    return outs


def inputs():
    rng = np.random.default_rng(4203)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((3, 8, 16)).astype(np.float32),
            rng.standard_normal((3, 16, 8)).astype(np.float32))
