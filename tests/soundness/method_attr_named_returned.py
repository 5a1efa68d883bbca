"""The fix method_attr_returned_unhinted's message gives: the method names its attribute's dims where it reads
it (``w: Tensor["d"] = self.w``) and returns ``jax.nn.silu(w)``: ``self.w`` is then an input of every call
(read again: another model's ``w`` gives its own result), whole on every device."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Model:
    def __init__(self, w):
        self.w = w

    @mesh(model=8, rules={"seq": "model"})
    def f(self, x: Tensor["seq"]):
        w: Tensor["d"] = self.w
        return x * 2, jax.nn.silu(w)


def inputs():
    return (np.ones((16,), np.float32),)


def scenario(mod, pick):
    x = np.random.default_rng(5).standard_normal((16,)).astype(np.float32)
    first = mod.Model(np.linspace(-2.0, 2.0, 4, dtype=np.float32))
    second = mod.Model(np.linspace(0.0, 3.0, 4, dtype=np.float32))
    return pick(first.f)(x), pick(second.f)(x)
