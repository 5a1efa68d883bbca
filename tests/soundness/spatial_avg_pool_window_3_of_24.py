"""Average pool window 3 stride 3 VALID on 24 x 48: 8 x 16 outputs split 2 x 4 (window not dividing the block 12)."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"]) -> Tensor["batch", "h3", "w3", "c"]:
    p: Tensor["batch", "h3", "w3", "c"] = jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 3, 3, 1), (1, 3, 3, 1),
                                                                 "VALID") / 9.0
    return p


def inputs():
    rng = np.random.default_rng(13)
    return (rng.standard_normal((2, 24, 48, 3)).astype(np.float32),)
