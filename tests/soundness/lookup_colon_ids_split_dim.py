"""x[:, ids]: a lookup along the second dim, split, by a 2-D index with negative ids."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(x: Tensor["batch", "vocab"], ids: Tensor["q", "k"]) -> Tensor["batch", "q", "k"]:
    return x[:, ids]


def inputs():
    rng = np.random.default_rng(273)
    return rng.standard_normal((4, 16)).astype(np.float32), rng.integers(-16, 16, (3, 5)).astype(np.int32)
