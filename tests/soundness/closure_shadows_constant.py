"""A factory parameter SCALE (an array) shadowing a module-level literal SCALE = 2.0, used in a @mesh function."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"  # the decorator knows the closure's array; a converted file refuses it

SCALE = 2.0


def make(SCALE):
    @mesh(batch=8)
    def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
        return x * SCALE

    return f


def scenario(mod, pick):
    x, s = inputs()
    return pick(mod.make(s))(x)


def inputs():
    rng = np.random.default_rng(121)
    return rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal((8, 1)).astype(np.float32)
