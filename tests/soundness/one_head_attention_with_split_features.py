"""Perceiver's cross-attention with one head and its features split over 'model' (``rules={"attn_features":
"model"}``): ``t.reshape(b, -1, heads, t.shape[-1] // heads)`` with ``heads`` 1.  meshify gave the split to the
major part of the cut, the heads, and refused ("reshape size 1 of dim 'heads' is not divisible by its 4 shards").
A dim of size 1 takes no split: with the head count 1 where meshify reads it (a literal passed to the helper, or
bound in the function), the head's features take the split (each device its block of them: the scores a partial
sum over 'model', completed before the softmax), and merging the head back (``.reshape(b, n, -1)``) gives the
split to the merged dim.  A head count known only when traced: one_head_attention_heads_known_when_traced.py."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

RULES = {"attn_features": "model", "kv_features": "model"}


def attention(x, context, wq, wkv, wo, heads):
    b, n, _ = x.shape
    q = x @ wq
    k, v = jnp.split(context @ wkv, 2, axis=-1)
    q, k, v = (t.reshape(b, -1, heads, t.shape[-1] // heads).transpose(0, 2, 1, 3) for t in (q, k, v))
    sim = jnp.einsum("bhid,bhjd->bhij", q, k) * q.shape[-1] ** -0.5
    attn = jax.nn.softmax(sim, axis=-1)
    out = jnp.einsum("bhij,bhjd->bhid", attn, v).transpose(0, 2, 1, 3).reshape(b, n, -1)
    return out @ wo


@mesh(batch=2, model=4, rules=RULES)
def cross(x: Tensor["batch", "latents", "d"], c: Tensor["batch", "inputs", "dc"], wq: Tensor["d", "attn_features"],
          wkv: Tensor["dc", "kv_features"], wo: Tensor["attn_features", "d"]) -> Tensor["batch", "latents", "d"]:
    return x + attention(x, c, wq, wkv, wo, 1)


@mesh(batch=2, model=4, rules=RULES)
def spelled(x: Tensor["batch", "latents", "d"], wq: Tensor["d", "attn_features"], wo: Tensor["attn_features", "d"]
            ) -> Tensor["batch", "latents", "d"]:
    b, n, _ = x.shape
    h, heads = x @ wq, 1
    q = h.reshape(b, -1, heads, h.shape[-1] // heads).transpose(0, 2, 1, 3)
    sim = jnp.einsum("bhid,bhjd->bhij", q, q)
    out = jnp.einsum("bhij,bhjd->bhid", jax.nn.softmax(sim, axis=-1), q).transpose(0, 2, 1, 3).reshape(b, n, -1)
    return out @ wo


def inputs():
    rng = np.random.default_rng(3504)
    x = rng.standard_normal((2, 4, 8)).astype(np.float32)
    c = rng.standard_normal((2, 6, 8)).astype(np.float32)
    wq = (rng.standard_normal((8, 16)) * 0.3).astype(np.float32)
    wkv = (rng.standard_normal((8, 32)) * 0.3).astype(np.float32)
    wo = (rng.standard_normal((16, 8)) * 0.3).astype(np.float32)
    return {"cross": (x, c, wq, wkv, wo), "spelled": (x, wq, wo)}
