"""``table.at[ids].add(g, mode="clip")`` along a split vocabulary: clipping out-of-range ids onto the edge
rows is not what a masked local scatter does, so it is refused with a fix (drop ``mode=``, or do not split
the vocabulary); the same scatter along an unsplit dim runs as written (``g``)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(model=8, rules={"vocab": "model"})
def f(table: Tensor["vocab", "e"], ids: Tensor["batch"], g: Tensor["batch", "e"]):
    return jnp.sum(table.at[ids].add(g, mode="clip") ** 2)


def inputs():
    rng = np.random.default_rng(6)
    return (rng.standard_normal((16, 3)).astype(np.float32), np.array([0, 5, -2, 19], np.int32),
            rng.standard_normal((4, 3)).astype(np.float32))
