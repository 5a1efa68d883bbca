"""take_along_axis over a vocab-split logits dim with labels out of range and negative (reference: wrap / NaN fill)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(logits: Tensor["batch", "vocab"], labels: Tensor["batch"]) -> Tensor["batch"]:
    picked = jnp.take_along_axis(logits, labels[:, None], axis=-1)
    return picked[:, 0]


def inputs():
    logits = np.random.default_rng(28).standard_normal((4, 16)).astype(np.float32)
    return logits, np.array([-1, 3, 16, 40], np.int32)
