"""Average pool window 3, stride 3, VALID, on 16 rows split 2 ways: 5 output rows do not split into 2 blocks.

Refused at the call, pointing at the pooling statement."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(h=2, w=4)
def f(x: Tensor["batch", "h", "w", "c"]) -> Tensor["batch", "h3", "w3", "c"]:
    p: Tensor["batch", "h3", "w3", "c"] = jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 3, 3, 1), (1, 3, 3, 1),
                                                                 "VALID") / 9.0
    return p


def inputs():
    rng = np.random.default_rng(12)
    return (rng.standard_normal((2, 16, 16, 3)).astype(np.float32),)
