"""a @ a and a + a.T for a square matrix hinted Tensor["d", "d"], d split."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=4, rules={"d": "model"})
def f(a: Tensor["d", "d"]) -> Tensor["d", "d"]:
    return a @ a + a.T


def inputs():
    return (np.random.default_rng(148).standard_normal((8, 8)).astype(np.float32),)
