"""Control: a slice of 4 columns renamed by a hint to a dim split 4 ways."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "e"]) -> Tensor["batch", "d"]:
    y: Tensor["batch", "d"] = x[:, :4]
    return y * 2.0


def inputs():
    return (np.random.default_rng(151).standard_normal((4, 8)).astype(np.float32),)
