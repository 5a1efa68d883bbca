"""emb[ids] with ids [batch/'data', seq/'model'] and the vocab over 'model': only the seq dim of the
ids is gathered (over 'model'), the batch stays split over 'data'."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"vocab": "model", "batch": "data", "seq": "model"})
def f(emb: Tensor["vocab", "d"], ids: Tensor["batch", "seq"]) -> Tensor["batch", "seq", "d"]:
    return emb[ids]
def inputs():
    r = np.random.default_rng(0)
    return r.standard_normal((16, 3)).astype(np.float32), r.integers(-16, 16, (4, 8)).astype(np.int32)
