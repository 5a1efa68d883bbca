"""jnp.take(mode="fill") with ids out of range on a table whose looked-up dim and the ids' batch
dim are split over the same axis: ids gathered over it, out-of-range ids give NaN as in jnp."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False  # NaN rows


@mesh(model=8, rules={"vocab": "model", "batch": "model"})
def f(emb: Tensor["vocab", "d"], ids: Tensor["batch"]) -> Tensor["batch", "d"]:
    return jnp.take(emb, ids, axis=0, mode="fill")


def inputs():
    emb = np.random.default_rng(8).standard_normal((16, 3)).astype(np.float32)
    ids = np.array([0, 3, -1, 15, 16, 40, -17, 7] * 2, np.int32)
    return emb, ids
