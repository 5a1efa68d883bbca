"""A @mesh function in a factory, closing over an array it uses unnamed beside a split activation."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"  # the decorator knows the closure's array; a converted file refuses it


def make(W):
    @mesh(batch=8)
    def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
        return x * W

    return f


def scenario(mod, pick):
    x, w = inputs()
    return pick(mod.make(w))(x)


def inputs():
    rng = np.random.default_rng(120)
    return rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal((8, 1)).astype(np.float32)
