"""A @mesh method calling a plain helper method of its class (self.norm(x))."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Model:
    def norm(self, x):
        return x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6)

    @mesh(batch=2, model=4, rules={"d": "model"})
    def forward(self, x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
        return self.norm(x) * 2.0


def scenario(mod, pick):
    (x,) = inputs()
    return pick(mod.Model().forward)(x)


def inputs():
    return (np.random.default_rng(154).standard_normal((4, 8)).astype(np.float32),)
