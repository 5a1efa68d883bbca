"""A generation buffer as decoding code builds it: ``out = jnp.zeros((B, steps), jnp.int32)`` (B from a split
argument's shape, steps a static int) written one column per step, ``out.at[:, i].set(tok)``, in a ``fori_loop``
and in a Python loop; ``(B, 4)`` beside it.  Before: "dims meshify cannot infer" (attack on KV-cache decoding); the
number beside the batch's size names a dim of its own now (``steps?``, ``4?``)."""
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh

EXPECT = "match"
GRAD = False  # (ids)


@mesh(batch=2, model=4, rules={"batch": "model"})
def generate(first: Annotated[jax.Array, "batch"], steps: int = 5):
    B = first.shape[0]
    out = jnp.zeros((B, steps), jnp.int32)

    def body(i, state):
        tok, out = state
        tok = (tok * 3 + 1) % 7
        return tok, out.at[:, i].set(tok)

    _, out = jax.lax.fori_loop(0, steps, body, (first, out))
    extra = jnp.ones((B, 4), jnp.int32) * first[:, None]
    for i in range(4):
        extra = extra.at[:, i].add(i)
    return out, extra


def inputs():
    return {"generate": (np.arange(-4, 12, dtype=np.int32),)}
