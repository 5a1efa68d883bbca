"""A helper imported from another module of the tree (`from tests.soundness._imported_layers import
mlp`, and the module itself): followed, specialised for the caller's layouts and emitted into the
caller's file, its module's SCALE carried under a prefix (this module has its own SCALE)."""
import numpy as np

import tests.soundness._imported_layers as layers
from meshify import Tensor, mesh
from tests.soundness._imported_layers import mlp

EXPECT = "match"
SCALE = 3.0


@mesh(batch=2, model=4, rules={"f": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "f"], w2: Tensor["f", "d"]) -> Tensor["batch", "d"]:
    return mlp(x, w1, w2) + layers.mlp(x * SCALE, w1, w2)


def inputs():
    rng = np.random.default_rng(1414)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 8)).astype(np.float32))
