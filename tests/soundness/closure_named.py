"""A @mesh function defined inside a factory, closing over an array it names first."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def make(W):
    @mesh(batch=2, model=4, rules={"e": "model"})
    def f(x: Tensor["batch", "d"]) -> Tensor["batch", "e"]:
        w: Tensor["d", "e"] = W
        return jnp.tanh(x @ w)

    return f


def scenario(mod, pick):
    x, w = inputs()
    return pick(mod.make(w))(x)


def inputs():
    rng = np.random.default_rng(119)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)
