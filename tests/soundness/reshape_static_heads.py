"""x.reshape(B, n_heads, -1) with B = x.shape[0] and n_heads a static argument; heads split over 'model'."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_model": "model", "heads": "model"})
def f(x: Tensor["batch", "d_model"], n_heads: int) -> Tensor["batch", "heads"]:
    B = x.shape[0]
    h: Tensor["batch", "heads", "d_head"] = x.reshape(B, n_heads, -1)
    return jnp.sum(h * h, axis=-1)


def inputs():
    return np.random.default_rng(60).standard_normal((4, 32)).astype(np.float32), 8
