"""Rows of a split dim read by int indices known when tracing (a Python loop over ``range(x.shape[0])``,
``x[0]``, ``h[:, -1]``: the last position of a sequence split over devices): each is the global row, gathered from
the device holding it (one all-gather of each device's row at that place, the owner's kept).  Before, "indexing
split dim 'batch'" (a bad input) told the user to index before sharding."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=4)
def f(x: Tensor["batch", "d"]) -> Tensor["d"]:
    total = x[0] * 0
    for i in range(x.shape[0]):
        total = total + x[i] * (i + 1)
    return total


@mesh(batch=2, model=4, rules={"seq": "model"})
def last_token(h: Tensor["batch", "seq", "d"], w: Tensor["d", "vocab"]):
    first, last = h[:, 0], h[:, -1, :]
    return jax.nn.log_softmax(last @ w), jnp.einsum("bd,bd->b", first, last), h[..., 3, 1:]


def inputs():
    rng = np.random.default_rng(5)
    return {"f": (rng.standard_normal((8, 3)).astype(np.float32),),
            "last_token": (rng.standard_normal((4, 8, 6)).astype(np.float32),
                           rng.standard_normal((6, 10)).astype(np.float32))}
