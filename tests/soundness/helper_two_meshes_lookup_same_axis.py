"""One lookup helper called from two @mesh functions: on one mesh only the vocab is split, on the
other the ids' batch and the vocab share 'model' (the ids gathered over it there): two versions,
jnp.take(mode="clip") with negative and out-of-range ids on both."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def embed(emb, ids):
    return jnp.take(emb, ids, axis=0, mode="clip")

@mesh(model=8, rules={"vocab": "model"})
def f(emb: Tensor["vocab", "d"], ids: Tensor["batch"]) -> Tensor["batch", "d"]:
    return embed(emb, ids)

@mesh(data=2, model=4, rules={"vocab": "model", "batch": "model", "d": "data"})
def g(emb: Tensor["vocab", "d"], ids: Tensor["batch"]) -> Tensor["batch", "d"]:
    return embed(emb, ids)
def inputs():
    r = np.random.default_rng(0)
    a = (r.standard_normal((16, 4)).astype(np.float32), np.array([-1, 3, 15, 50, 0, 7, -9, 2], np.int32))
    return {"f": a, "g": a}
