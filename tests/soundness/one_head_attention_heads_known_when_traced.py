"""One-head attention with its features split over 'model' where the head count is known only when traced (a
config field): meshify cuts the split dim by its major part, the heads, and one head cannot be split over 4
devices; which part takes the split is decided when rewriting, so the call is refused, at the reshape, with the
fixes that run (keep the features whole, or write the 1 where meshify reads it:
one_head_attention_with_split_features.py)."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


class Config(NamedTuple):
    cross_heads: int = 1


@mesh(batch=2, model=4, rules={"attn_features": "model"})
def f(x: Tensor["batch", "latents", "d"], wq: Tensor["d", "attn_features"], wo: Tensor["attn_features", "d"],
      cfg: Config = Config()) -> Tensor["batch", "latents", "d"]:
    b, n, _ = x.shape
    heads = cfg.cross_heads
    q = (x @ wq).reshape(b, n, heads, -1)
    sim = jnp.einsum("bihd,bjhd->bhij", q, q)
    return jnp.einsum("bhij,bjhd->bihd", jax.nn.softmax(sim, axis=-1), q).reshape(b, n, -1) @ wo


def inputs():
    rng = np.random.default_rng(3505)
    return (rng.standard_normal((2, 4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 8)).astype(np.float32))
