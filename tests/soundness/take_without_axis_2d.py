"""``jnp.take(table, ids)`` without ``axis=`` on a 2-D table: JAX reads the table flattened, whose dims
meshify would have to merge; refused, with a fix naming the axis or the flattening."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(emb: Tensor["vocab", "d"], ids: Tensor["batch"]):
    return jnp.take(emb, ids)


def inputs():
    return (np.ones((64, 4), np.float32), np.arange(2, dtype=np.int32))
