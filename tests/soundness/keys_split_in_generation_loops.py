"""A sampling loop that splits its key each step, as generation code writes it: ``key, sub = jax.random.split(key)``
in a ``fori_loop`` carry and in a Python loop, typed keys and raw ``PRNGKey`` data, a three-way split, draws over a
vocab split over 'model'.  Before: the split's result had dims meshify could not infer, so the carry "changed layout"
(attack on KV-cache decoding; the fix asked for a hint inside the loop)."""
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh

EXPECT = "match"
GRAD = False  # (ids)


@mesh(batch=2, model=4, rules={"vocab": "model"})
def carried(logits: Annotated[jax.Array, "batch", "vocab"], key: Annotated[jax.Array, ()]):
    def body(i, state):
        key, acc = state
        key, sub = jax.random.split(key)
        return key, acc + jax.random.categorical(sub, logits / (i + 1.0), axis=-1)
    _, acc = jax.lax.fori_loop(0, 3, body, (key, jnp.zeros(logits.shape[0], jnp.int32)))
    return acc


@mesh(batch=2, model=4, rules={"vocab": "model"})
def unrolled(logits: Annotated[jax.Array, "batch", "vocab"], key: Annotated[jax.Array, "key_data"]):
    out = []
    for _ in range(2):
        key, a, b = jax.random.split(key, 3)
        noise = jax.random.gumbel(b, logits.shape)
        out.append(jax.random.categorical(a, logits + noise, axis=-1))
    return jnp.stack(out)


def inputs():
    rng = np.random.default_rng(68)
    logits = rng.standard_normal((8, 16)).astype(np.float32)
    return {"carried": (logits, jax.random.key(7)), "unrolled": (logits, jax.random.PRNGKey(8))}
