"""A slice of 6 columns renamed by a hint to a dim split 4 ways: 6 is not divisible by 4."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"  # 6 columns cannot be split over 4 devices


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "e"]) -> Tensor["batch", "d"]:
    y: Tensor["batch", "d"] = x[:, :6]
    return y * 2.0


def inputs():
    return (np.random.default_rng(150).standard_normal((4, 8)).astype(np.float32),)
