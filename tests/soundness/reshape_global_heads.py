"""x.reshape(B, N_HEADS, D_HEAD) with module-level constants; heads split over 'model'."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

N_HEADS = 8
D_HEAD = 4


@mesh(batch=2, model=4, rules={"d_model": "model", "heads": "model"})
def f(x: Tensor["batch", "d_model"]) -> Tensor["batch", "heads", "d_head"]:
    B = x.shape[0]
    h: Tensor["batch", "heads", "d_head"] = x.reshape(B, N_HEADS, D_HEAD)
    return jnp.tanh(h)


def inputs():
    return (np.random.default_rng(61).standard_normal((4, 32)).astype(np.float32),)
