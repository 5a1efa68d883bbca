"""Control: an array imported from another module of the project, named first (s: Tensor[...] = ROW_SCALE)."""
import numpy as np

from meshify import Tensor, mesh
from tests.soundness._constants import ROW_SCALE

EXPECT = "match"


@mesh(batch=8)
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    s: Tensor["batch", "one"] = ROW_SCALE
    return x * s[:, 0][:, None]


def inputs():
    return (np.random.default_rng(168).standard_normal((8, 4)).astype(np.float32),)
