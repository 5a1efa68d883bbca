"""``t.reshape(b, -1, heads, t.shape[-1] // heads)`` (public code's heads reshape, for queries and keys of any
length: lucidrains' Perceiver, Flax's ``reshape(batch, -1, num_heads, head_dim)``) of [batch, latents,
attn_features] with the features split: the -1 can only keep ``latents`` (a split dim enters a merge only as its
major part), so it does, checked when the function runs against the array's sizes (``mr.kept_dims``); also
literal head sizes.  Before: refused ('reshape merges ['latents', 'attn_features'] into 3 new dims but split dim
'attn_features' is not the major (first) part')."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "attn_features": "model"})
def f(x: Tensor["batch", "latents", "d"], ctx: Tensor["batch", "inputs", "d"], wq: Tensor["d", "attn_features"],
      wk: Tensor["d", "attn_features"], heads: int = 8):
    b = x.shape[0]
    q, k = x @ wq, ctx @ wk
    q, k = (t.reshape(b, -1, heads, t.shape[-1] // heads) for t in (q, k))
    sim = jnp.einsum("bihd,bjhd->bhij", q, k)
    k2 = k.reshape(b, -1, 8, 4)
    return jax.nn.softmax(sim, axis=-1), k2 * 2.0


def inputs():
    rng = np.random.default_rng(8)
    return (rng.standard_normal((4, 8, 16)).astype(np.float32), rng.standard_normal((4, 12, 16)).astype(np.float32),
            0.3 * rng.standard_normal((16, 32)).astype(np.float32), 0.3 * rng.standard_normal((16, 32)).astype(np.float32))
