"""jnp.take_along_axis whose taken dim (vocab) and the index's other dim (batch) are split over the
same axis: the other dim is gathered over it, each device takes along its block of the vocab (a
masked take, summed over the axis); was refused ("shares a mesh axis with another dim")."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=8, rules={"vocab": "model", "batch": ["model"]})
def f(logits: Tensor["vocab", "batch"], labels: Tensor["k", "batch"]) -> Tensor["k", "batch"]:
    return jnp.take_along_axis(logits, labels, axis=0)


def inputs():
    r = np.random.default_rng(9)
    return r.standard_normal((16, 8)).astype(np.float32), r.integers(-16, 16, (2, 8)).astype(np.int32)
