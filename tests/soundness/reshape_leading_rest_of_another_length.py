"""``q.reshape(b, -1, 4, 4)`` of [batch, length, attn] (attn 32, split over model): on one device the -1 is
16, twice the length, rows of the split features merged into it, which blocks cannot do: refused when the
function runs (``mr.kept_dims`` checks the length the -1 was taken to keep), never a silently different result."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(data=2, model=4, rules={"batch": "data", "attn": "model"})
def f(x: Tensor["batch", "length", "d"], w: Tensor["d", "attn"]):
    b = x.shape[0]
    q = (x @ w).reshape(b, -1, 4, 4)
    return jnp.sum(q * q, axis=(2, 3))


def inputs():
    rng = np.random.default_rng(9)
    return rng.standard_normal((4, 8, 16)).astype(np.float32), rng.standard_normal((16, 32)).astype(np.float32)
