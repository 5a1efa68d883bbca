"""Control: a NamedTuple of hinted params."""
from typing import NamedTuple

import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class MLP(NamedTuple):
    w1: Tensor["d", "d_ff"]
    w2: Tensor["d_ff", "d"]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], p: MLP) -> Tensor["batch", "d"]:
    return jax.nn.relu(x @ p.w1) @ p.w2


def inputs():
    rng = np.random.default_rng(85)
    return (rng.standard_normal((4, 8)).astype(np.float32),
            MLP(rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal((16, 8)).astype(np.float32)))
