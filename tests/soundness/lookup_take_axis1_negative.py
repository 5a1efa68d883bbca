"""jnp.take(w, ids, axis=1) over a vocab-split second dim, with negative ids (they wrap)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(w: Tensor["d", "vocab"], ids: Tensor["batch"]) -> Tensor["d", "batch"]:
    return jnp.take(w, ids, axis=1)


def inputs():
    return (np.random.default_rng(156).standard_normal((3, 16)).astype(np.float32),
            np.array([-1, 0, -16, 9], np.int32))
