"""A @mesh method reading a float attribute self.scale, changed between two calls (a schedule)."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Block:
    def __init__(self, scale):
        self.scale = scale

    @mesh(batch=2, model=4, rules={"d_ff": "model"})
    def forward(self, x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]) -> Tensor["batch", "d_ff"]:
        return jax.nn.relu(x @ w) * self.scale


def scenario(mod, pick):
    x, w = inputs()
    block = mod.Block(1.0)
    first = pick(block.forward)(x, w)
    block.scale = 0.25
    second = pick(block.forward)(x, w)
    return first, second


def inputs():
    rng = np.random.default_rng(71)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)
