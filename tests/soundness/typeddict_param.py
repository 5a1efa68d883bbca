"""A TypedDict parameter p: Params read with p["w"], p["b"]."""
from typing import TypedDict

import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Params(TypedDict):
    w: Tensor["d", "d_ff"]
    b: Tensor["d_ff"]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], p: Params) -> Tensor["batch", "d_ff"]:
    return jax.nn.gelu(x @ p["w"] + p["b"])


def inputs():
    rng = np.random.default_rng(83)
    return (rng.standard_normal((4, 8)).astype(np.float32),
            {"w": rng.standard_normal((8, 16)).astype(np.float32), "b": rng.standard_normal((16,)).astype(np.float32)})
