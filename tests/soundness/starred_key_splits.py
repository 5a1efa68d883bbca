"""``key, *subs = jax.random.split(key, n)`` as training and sampling code writes it: the starred name a list of
keys, indexed (``subs[0]``) and looped over; typed keys and raw ``PRNGKey`` data, draws over a batch split over
'data' and a vocab split over 'model'.  Before: "assignment to 'key, *subs'" (an unsupported target)."""
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh

EXPECT = "match"
GRAD = False  # (keys)
N_LAYERS = 0  # (split(key, N_LAYERS + 1): one key, no layer key)


@mesh(data=2, model=4, rules={"batch": "data", "vocab": "model"})
def typed(logits: Annotated[jax.Array, "batch", "vocab"], key: Annotated[jax.Array, ()]):
    key, *subs = jax.random.split(key, 3)
    noisy = logits + jax.random.gumbel(subs[0], logits.shape) * jax.random.uniform(subs[1], logits.shape)
    key, *layer_keys = jax.random.split(key, N_LAYERS + 1)
    for k in layer_keys:
        noisy = noisy + jax.random.normal(k, logits.shape)
    first, *rest, last = jax.random.split(key, 5)
    total = jax.random.normal(first, logits.shape) + jax.random.normal(last, logits.shape)
    for k in rest:
        total = total + jax.random.bernoulli(k, 0.3, logits.shape)
    return jax.random.categorical(key, noisy, axis=-1), total


@mesh(data=2, model=4, rules={"batch": "data", "vocab": "model"})
def raw(logits: Annotated[jax.Array, "batch", "vocab"], key: Annotated[jax.Array, "key_data"]):
    out = []
    for _ in range(2):
        key, *subs = jax.random.split(key, 4)
        out.append(jax.random.categorical(subs[2], logits + jax.random.gumbel(subs[0], logits.shape), axis=-1))
    return jnp.stack(out), key


def inputs():
    rng = np.random.default_rng(69)
    logits = rng.standard_normal((8, 16)).astype(np.float32)
    return {"typed": (logits, jax.random.key(11)), "raw": (logits, jax.random.PRNGKey(12))}
