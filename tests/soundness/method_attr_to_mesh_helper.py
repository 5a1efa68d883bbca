"""A method passes its unhinted array attribute self.w to another @mesh function g that hints it:
refused with what is wrong (self.w is read as a Python value, its dims unseen) and the fix
(w: Tensor["d", "e"] = self.w, then g(x, w)); was "g() hints w as [d, e] but the caller passes
static", which named no cause.  method_attr_named_to_mesh_helper is the fixed program."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(data=8)
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["batch", "e"]:
    return x @ w


class Model:
    def __init__(self):
        self.w = jnp.arange(12.0).reshape(4, 3) / 10

    @mesh(data=8)
    def f(self, x: Tensor["batch", "d"]) -> Tensor["batch", "e"]:
        return g(x, self.w)


def inputs():
    return (np.ones((16, 4), np.float32),)


def scenario(mod, pick):
    model = mod.Model()
    x = jnp.asarray(np.random.default_rng(3).standard_normal((16, 4)).astype(np.float32))
    return pick(model.f)(x)
