"""emb[ids, :] (an explicit full slice beside the ids) on a vocab-split table."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(emb: Tensor["vocab", "d"], ids: Tensor["batch"]) -> Tensor["batch", "d"]:
    return emb[ids, :]


def inputs():
    rng = np.random.default_rng(155)
    return rng.standard_normal((16, 4)).astype(np.float32), rng.integers(0, 16, (4,)).astype(np.int32)
