"""Control: emb[ids] on a vocab-split table with ids in range."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(emb: Tensor["vocab", "d"], ids: Tensor["batch", "length"]) -> Tensor["batch", "length", "d"]:
    return emb[ids] * 2.0


def inputs():
    rng = np.random.default_rng(20)
    return rng.standard_normal((16, 4)).astype(np.float32), rng.integers(0, 16, (4, 3)).astype(np.int32)
