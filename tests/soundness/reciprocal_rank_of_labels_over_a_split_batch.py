"""Mean reciprocal rank over a split batch (a contrastive model's retrieval metric): ``labels = jnp.arange(n)``
compared with the split rows, argmax'd, then a mean of ``1 / (rank + 1)``.  The mean's dtype was read by tracing
``rank``'s expression again as written, on the whole ``labels`` and the local rows: a raw broadcasting TypeError
(attack).  The bound name carries its dtype now; an unbound expression reading arrays of other splits has no
text carrier.  float32 and float16."""
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh

EXPECT = "match"
GRAD = False  # (ranks)


@mesh(batch=8)
def mrr(logits: Annotated[jax.Array, "batch", "cand"]):
    labels = jnp.arange(logits.shape[0])
    rank = jnp.argmax(logits == labels[:, None], axis=1)
    return jnp.mean(1.0 / (rank + 1))


@mesh(batch=8)
def mrr_inline(logits: Annotated[jax.Array, "batch", "cand"]):
    labels = jnp.arange(logits.shape[0])
    return jnp.mean(1.0 / (jnp.argmax(logits == labels[:, None], axis=1) + 1))


@mesh(batch=2)
def mrr_half(logits: Annotated[jax.Array, "batch", "cand"]):
    labels = jnp.arange(logits.shape[0])
    rank = jnp.argmax(logits == labels[:, None], axis=1)
    return jnp.mean(jnp.float16(1.0) / (rank + 1).astype(logits.dtype))


def inputs():
    rng = np.random.default_rng(64)
    x = rng.integers(0, 16, (16, 16)).astype(np.float32)
    return {"mrr": (x,), "mrr_inline": (x,), "mrr_half": (x.astype(np.float16),)}
