"""Python's ``map(lambda t: ..., (q, k, v))`` (lucidrains' Perceiver: ``q, k, v = map(lambda t: rearrange(t,
'b n (h d) -> b h n d', h=h), (q, k, v))``), read as the generator ``(body for t in (q, k, v))`` it equals: each
item rewritten for its own layout (queries of the latents, keys and values of the input), the heads split; also a
map of a reshape, and ``list(map(...))``.  Before: 'map has no meshify rule' on split values."""
import jax
import jax.numpy as jnp
import numpy as np
from einops import rearrange

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"attn": "model", "kv": "model"})
def f(x: Tensor["batch", "latents", "d"], ctx: Tensor["batch", "inputs", "d"], wq: Tensor["d", "attn"],
      wk: Tensor["d", "attn"], wv: Tensor["d", "attn"], wo: Tensor["attn", "d"], h: int = 8):
    b = x.shape[0]
    q, k, v = x @ wq, ctx @ wk, ctx @ wv
    q, k, v = map(lambda t: rearrange(t, "b n (h d) -> b h n d", h=h), (q, k, v))
    attn = jax.nn.softmax(jnp.einsum("bhid,bhjd->bhij", q, k) * q.shape[-1] ** -0.5, axis=-1)
    out = rearrange(jnp.einsum("bhij,bhjd->bhid", attn, v), "b h n d -> b n (h d)") @ wo
    r1, r2 = list(map(lambda t: t.reshape(b, -1, h, t.shape[-1] // h) * 2.0, [ctx @ wk, ctx @ wv]))
    return out, r1 - r2


def inputs():
    rng = np.random.default_rng(12)
    w = [0.3 * rng.standard_normal((16, 32)).astype(np.float32) for _ in range(3)]
    return (rng.standard_normal((4, 8, 16)).astype(np.float32), rng.standard_normal((4, 12, 16)).astype(np.float32),
            *w, 0.3 * rng.standard_normal((32, 16)).astype(np.float32))
