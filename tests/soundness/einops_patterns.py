"""einops as research code writes it: ViT patches by rearrange (groups split and merged), multi-head
attention with heads split off a split feature dim, grouped-query attention by repeat of split kv heads,
``...``, size-1 axes, reduce by mean/sum/max over split and unsplit axes (partial sums carried), a helper,
float16; timm's fused QKV as an einops pattern (cut into its three sections first); lengths given by keyword are divided per shard in the generated call."""

import einops
import jax
import jax.numpy as jnp
import numpy as np
from einops import rearrange, reduce, repeat

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-3


def heads(t, n):
    return rearrange(t, "b s (h d) -> b h s d", h=n)


@mesh(batch=2, model=4, rules={"q_features": "model", "kv_features": "model"})
def vit(img: Tensor["batch", "height", "width", "channels"], w: Tensor["patch_features", "d_model"],
        wq: Tensor["d_model", "q_features"], wkv: Tensor["d_model", "kv_features"],
        wo: Tensor["q_features", "d_model"]):
    x = rearrange(img, "b (h p1) (w p2) c -> b (h w) (p1 p2 c)", p1=4, p2=4) @ w
    q = heads(x @ wq, 8)
    kv = rearrange(x @ wkv, "b s (kv d) -> b s kv d", kv=4)
    k = rearrange(repeat(kv, "b s kv d -> b s (kv g) d", g=2), "b s h d -> b h s d")
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / 2.0
    o = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), k)
    o = rearrange(o, "b h s d -> b s (h d)") @ wo  # partial over 'model'
    pooled = reduce(o, "b s d -> b d", "mean")
    peak = einops.reduce(jnp.tanh(o), "b s d -> b 1 d", "max")
    scaled = rearrange(pooled, "... d -> ... 1 d") * peak
    return scaled, reduce(x, "b (s two) d -> b s", "sum", two=2)


@mesh(batch=2, model=4, rules={"qkv_features": "model", "attn_features": "model"})
def fused_qkv(x: Tensor["batch", "seq", "d_model"], w: Tensor["d_model", "qkv_features"],
              proj: Tensor["attn_features", "d_model"]):
    q, k, v = rearrange(x @ w, "b n (three h d) -> three b h n d", three=3, h=8)
    s = jax.nn.softmax(jnp.einsum("bhqd,bhkd->bhqk", q, k) / 2.0, axis=-1)
    return rearrange(jnp.einsum("bhqk,bhkd->bhqd", s, v), "b h n d -> b n (h d)") @ proj


@mesh(batch=8, rules={"seq": None})
def pool(x: Tensor["batch", "seq", "d_model"]):
    return reduce(x, "b s d -> s d", "mean"), reduce(x, "b s d -> b", "max"), repeat(x, "b s d -> b s r d", r=2)


def inputs():
    rng = np.random.default_rng(0)
    img = rng.normal(size=(8, 8, 8, 3)).astype(np.float32)
    w = (rng.normal(size=(48, 16)) / 6).astype(np.float32)
    wq = (rng.normal(size=(16, 32)) / 4).astype(np.float32)
    wkv = (rng.normal(size=(16, 16)) / 4).astype(np.float32)
    wo = (rng.normal(size=(32, 16)) / 4).astype(np.float32)
    x = rng.normal(size=(8, 4, 16)).astype(np.float16)
    wqkv = (rng.normal(size=(16, 96)) / 4).astype(np.float32)
    proj = (rng.normal(size=(32, 16)) / 4).astype(np.float32)
    xs = rng.normal(size=(8, 4, 16)).astype(np.float32)
    return {"vit": (img, w, wq, wkv, wo), "pool": (x,), "fused_qkv": (xs, wqkv, proj)}
