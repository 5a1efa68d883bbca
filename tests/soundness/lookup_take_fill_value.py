"""jnp.take(..., mode="fill", fill_value=-1.0) on a vocab-split table, with ids out of range."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(emb: Tensor["vocab", "d"], ids: Tensor["batch", "length"]) -> Tensor["batch", "length", "d"]:
    return jnp.take(emb, ids, axis=0, mode="fill", fill_value=-1.0)


def inputs():
    emb = np.random.default_rng(26).standard_normal((16, 4)).astype(np.float32)
    ids = np.array([[-1, 0, 3], [40, 5, -3], [2, 17, 15], [7, 8, -20]], np.int32)
    return emb, ids
