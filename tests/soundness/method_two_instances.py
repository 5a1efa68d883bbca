"""Control: two instances of a class with a @mesh method, different weights each."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Linear:
    def __init__(self, w):
        self.w = w

    @mesh(batch=8)
    def forward(self, x: Tensor["batch", "d"]) -> Tensor["batch", "e"]:
        w: Tensor["d", "e"] = self.w
        return x @ w


def scenario(mod, pick):
    x, w0, w1 = inputs()
    return pick(mod.Linear(w0).forward)(x), pick(mod.Linear(w1).forward)(x)


def inputs():
    rng = np.random.default_rng(72)
    return (rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32),
            rng.standard_normal((4, 3)).astype(np.float32))
