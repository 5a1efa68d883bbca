"""``zip(hs, [x @ w1, x])`` where ``hs`` is a list whose length meshify does not know while rewriting: the pairs
it yields form a list of that unknown length, read by one rewrite of the code, but the known list's items have
two layouts (``[batch, d_ff]`` and ``[batch, d]``); refused (the fix gives the items one layout, never
unsharding)."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], n: int = 3):
    hs = [x * i for i in range(n) if i]
    return [h * g.sum() for h, g in list(zip(hs, [x @ w1, x]))]


def inputs():
    rng = np.random.default_rng(4304)
    return rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal((16, 32)).astype(np.float32)
