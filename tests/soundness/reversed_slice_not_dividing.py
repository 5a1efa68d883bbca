"""x[:, 13:2:-1] of 16 entries split over 4 takes 11, which do not split into 4 blocks: refused at the call (as
x[:, 3:14] is), not run with blocks of another size.  Its divisible kin run: reversed_slices_along_split_dims."""
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_ff"]):
    return x[:, 13:2:-1] * 2.0


def inputs():
    return (np.random.default_rng(72).standard_normal((8, 16)).astype(np.float32),)
