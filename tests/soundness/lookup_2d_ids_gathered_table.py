"""A small table split along the looked-up dim, read by many ids (sizes given): the table is gathered
(fewer bytes than the psum of the result); negative and out-of-range ids index as on one device."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"buckets": "model"}, dims={"buckets": 8, "heads": 2, "q": 8, "k": 8})
def f(table: Tensor["buckets", "heads"], ids: Tensor["q", "k"]) -> Tensor["q", "k", "heads"]:
    return table[ids] * 2.0


def inputs():
    rng = np.random.default_rng(272)
    return rng.standard_normal((8, 2)).astype(np.float32), rng.integers(-12, 12, (8, 8)).astype(np.int32)
