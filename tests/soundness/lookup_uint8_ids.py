"""emb[ids] with uint8 ids (250 and 16 out of range: clamped as jnp indexing does) on a
vocab-split table: the masked local lookup's offsets must not wrap around in uint8."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"vocab": "model"})
def f(emb: Tensor["vocab", "d"], ids: Tensor["batch"]) -> Tensor["batch", "d"]:
    return emb[ids]
def inputs():
    r = np.random.default_rng(0)
    return r.standard_normal((16, 8)).astype(np.float32), np.array([1, 250, 3, 12, 16, 0, 15, 7], np.uint8)
