"""A 2-D index with negative ids into a table split along the looked-up dim (T5's table[buckets])."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"buckets": "model"})
def f(table: Tensor["buckets", "heads"], ids: Tensor["q", "k"]) -> Tensor["heads", "q", "k"]:
    return table[ids].transpose(2, 0, 1)


def inputs():
    rng = np.random.default_rng(271)
    return rng.standard_normal((16, 3)).astype(np.float32), rng.integers(-16, 16, (5, 6)).astype(np.int32)
