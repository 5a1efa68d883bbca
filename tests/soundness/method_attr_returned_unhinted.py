"""A method returns ``jax.nn.silu(self.w)``, ``self.w`` an attribute set in ``__init__`` from an argument with no
hint: meshify cannot know its dims and reads it as a Python value (an array there is refused when called).
Refused where it is read, saying so, with the fix that works (``w: Tensor["d"] = self.w``, then ``silu(w)``: an
input, read again on every call); was "f() returns 'jax.nn.silu(self.w)', a Python value, and has no return
hint", which named no cause.  tests/test_static_attribute_hint.py checks the message; method_attr_named_returned
is the fixed program."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


class Model:
    def __init__(self, w):
        self.w = w

    @mesh(model=8, rules={"seq": "model"})
    def f(self, x: Tensor["seq"]):
        return x * 2, jax.nn.silu(self.w)


def inputs():
    return (np.ones((16,), np.float32),)


def scenario(mod, pick):
    model = mod.Model(np.linspace(-2.0, 2.0, 4, dtype=np.float32))
    x = np.random.default_rng(5).standard_normal((16,)).astype(np.float32)
    return pick(model.f)(x)
