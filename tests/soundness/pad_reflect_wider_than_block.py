"""jnp.pad(mode="reflect") along a split dim by as many rows as a block holds: the first block's mirror would need
the row after its last (reflect leaves the edge row out), which lives on the next device; refused, naming the pad."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"h": "model"})
def f(x: Tensor["batch", "h", "c"]) -> Tensor["batch", "h", "c"]:
    return jnp.pad(x, ((0, 0), (4, 4), (0, 0)), mode="reflect")[:, 4:-4] * 2.0


def inputs():
    return (np.random.default_rng(3212).standard_normal((4, 16, 3)).astype(np.float32),)
