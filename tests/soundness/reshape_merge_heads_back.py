"""Split heads, then merge them back: o.reshape(B, L, -1) with heads split (the major part of the merge)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"heads": "model", "d_model": "model"})
def f(x: Tensor["batch", "length", "d_model"], n_heads: int) -> Tensor["batch", "length", "d_model"]:
    B, L, D = x.shape
    h: Tensor["batch", "length", "heads", "d_head"] = x.reshape(B, L, n_heads, D // n_heads)
    h = jnp.tanh(h)
    o: Tensor["batch", "length", "d_model"] = h.reshape(B, L, -1)
    return o


def inputs():
    return np.random.default_rng(65).standard_normal((2, 3, 16)).astype(np.float32), 4
