"""emb[ids] on a vocab-split table with negative ids (numpy-style: -1 is the last row)."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(emb: Tensor["vocab", "d"], ids: Tensor["batch", "length"]) -> Tensor["batch", "length", "d"]:
    return emb[ids]


def inputs():
    emb = np.random.default_rng(21).standard_normal((16, 4)).astype(np.float32)
    ids = np.array([[-1, 0, 3], [-16, 5, -3], [2, -2, 15], [7, 8, -9]], np.int32)
    return emb, ids
