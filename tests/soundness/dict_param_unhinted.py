"""A plain dict of arrays (hint: dict) read with p["w"] beside a split activation."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"  # dict values have no dims meshify can read


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"], p: dict) -> Tensor["batch", "e"]:
    return x @ p["w"]


def inputs():
    rng = np.random.default_rng(84)
    return rng.standard_normal((4, 8)).astype(np.float32), {"w": rng.standard_normal((8, 3)).astype(np.float32)}
