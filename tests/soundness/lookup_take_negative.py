"""jnp.take(emb, ids, axis=0) on a vocab-split table with negative ids in [-vocab, 0) (they wrap)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(emb: Tensor["vocab", "d"], ids: Tensor["batch", "length"]) -> Tensor["batch", "length", "d"]:
    return jnp.take(emb, ids, axis=0)


def inputs():
    emb = np.random.default_rng(24).standard_normal((16, 4)).astype(np.float32)
    ids = np.array([[-1, 0, 3], [-16, 5, -3], [2, -2, 15], [7, 8, -9]], np.int32)
    return emb, ids
