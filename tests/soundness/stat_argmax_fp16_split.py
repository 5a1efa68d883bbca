"""Greedy decoding: argmax of float16 logits over a split vocab (ties broken by the first index)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(logits: Tensor["batch", "vocab"]) -> Tensor["batch"]:
    return logits.argmax(axis=-1)


def inputs():
    rng = np.random.default_rng(7017)
    x = rng.standard_normal((4, 16)).astype(np.float16)
    x[1, 3] = x[1, 12] = 7.0
    x[2, 15] = 65504.0
    return (x,)
