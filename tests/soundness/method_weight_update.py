"""A @mesh method reading self.w; the weights change (an optimizer step) between two calls."""
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
    x, w0, g = inputs()
    model = mod.Linear(w0)
    before = pick(model.forward)(x)
    model.w = model.w - 0.5 * g  # an SGD step
    after = pick(model.forward)(x)
    return before, after


def inputs():
    rng = np.random.default_rng(70)
    return (rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32),
            rng.standard_normal((4, 3)).astype(np.float32))
