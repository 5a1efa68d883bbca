"""``outs = outs + (relu(x @ w1) @ w2,)`` over a ``list[Layer]`` parameter: a partial sum (d_ff split) joined to a
tuple is completed there, as an append completes it (was refused: "joining ..., which holds an array ... partial
over 'model'").  Found by the attack on lists (session 19)."""
from typing import NamedTuple

import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Layer(NamedTuple):
    w1: Tensor["d_model", "d_ff"]
    w2: Tensor["d_ff", "d_model"]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_model"], layers: list[Layer]):
    outs = ()
    for i, layer in enumerate(layers):
        outs = outs + (jax.nn.relu(x @ layer.w1) @ layer.w2 * (i + 1),)
    return sum(outs) * len(outs), outs[0]


def inputs():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    layers = [Layer((rng.standard_normal((8, 16)) * .3).astype(np.float32), (rng.standard_normal((16, 8)) * .3).astype(np.float32)) for _ in range(3)]
    return (x, layers)
