"""A dict filled at keys meshify does not know while rewriting, each value a tuple holding a partial sum
(``outs[f"l{i}"] = (h, h @ wo[i])``, the contraction over a split ``d_ff``).  Such a dict's values must be whole
(whatever reads them, by any key), and meshify completes a stored array but not a tuple's items one by one:
refused with a fix, never stored partial."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for i in range(ws.shape[0]):
        h = jax.nn.relu(x @ ws[i])
        outs[f"l{i}"] = (h, h @ wo[i])
    return outs


def inputs():
    rng = np.random.default_rng(4204)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((3, 8, 16)).astype(np.float32),
            rng.standard_normal((3, 16, 8)).astype(np.float32))
