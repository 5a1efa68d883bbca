"""``outs[f"prev{i * 0}"]`` read in a kept loop that starts from ``outs = {}`` but stores at a literal key
(``outs["prev0"] = h``): the body's first walk reads a value it cannot know, and no second walk (for a dict of
keys known only when traced) comes to rewrite it for the value's layout.  Refused at the loop, with a fix."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for i in range(ws.shape[0]):
        h = jax.nn.relu(x @ ws[i])
        if i > 0:
            h = h + outs[f"prev{i * 0}"]  # "prev0", the key stored below: known only when traced here
        outs["prev0"] = h
        x = x + h @ wo[i]
    return x


def inputs():
    rng = np.random.default_rng(4215)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((3, 8, 16)).astype(np.float32),
            rng.standard_normal((3, 16, 8)).astype(np.float32))
