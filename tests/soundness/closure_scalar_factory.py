"""Control: a factory closing over a Python float (a hyper-parameter)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def make(eps):
    @mesh(batch=2, model=4, rules={"d": "model"})
    def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
        return x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps)

    return f


def scenario(mod, pick):
    (x,) = inputs()
    return pick(mod.make(1e-3))(x), pick(mod.make(10.0))(x)


def inputs():
    return (np.random.default_rng(122).standard_normal((4, 8)).astype(np.float32),)
