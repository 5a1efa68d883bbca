"""An if on a size known only when traced that adds a key to a dict of known keys in one branch, the value added
of another layout than the others (split over ``d_ff``, beside one whole along ``d``): which keys the dict holds
is known only when traced, and no one layout stands for its values.  Was the first branch's dict whatever the
trace took (a KeyError from the generated code for the other); refused naming both key sets and the layouts."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]):
    m = {"a": x}
    if x.shape[1] < 4:
        m["h"] = jax.nn.relu(x @ w)
    return m


def inputs():
    rng = np.random.default_rng(4214)
    return rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32)
