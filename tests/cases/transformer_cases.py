"""Transformer pieces for the tests: one block (Megatron layout) and a vocab-parallel loss."""

import jax
import jax.numpy as jnp

from meshify import Tensor, mesh

RULES = {"heads": "model", "d_ff": "model", "vocab": "model"}


@mesh(batch=2, model=4, rules={"heads": "model", "d_ff": "model", "vocab": "model"})
def block(x: Tensor["batch", "length", "d_model"],
          norm1: Tensor["d_model"],
          wq: Tensor["d_model", "heads", "d_head"],
          wk: Tensor["d_model", "heads", "d_head"],
          wv: Tensor["d_model", "heads", "d_head"],
          wo: Tensor["heads", "d_head", "d_model"],
          norm2: Tensor["d_model"],
          w1: Tensor["d_model", "d_ff"],
          w2: Tensor["d_ff", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    length = x.shape[1]
    causal = jnp.arange(length)[:, None] >= jnp.arange(length)[None, :]
    h = x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-6) * norm1
    q = jnp.einsum("bld,dhk->blhk", h, wq)
    k = jnp.einsum("bld,dhk->blhk", h, wk)
    v = jnp.einsum("bld,dhk->blhk", h, wv)
    scores = jnp.einsum("bqhk,bshk->bhqs", q, k) / jnp.sqrt(q.shape[-1])
    probs = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
    x = x + jnp.einsum("bhqs,bshk,hkd->bqd", probs, v, wo)
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    h = (x - mu) / jnp.sqrt(var + 1e-5) * norm2
    return x + jnp.einsum("blf,fd->bld", jax.nn.gelu(jnp.einsum("bld,df->blf", h, w1)), w2)


@mesh(batch=2, model=4, rules={"vocab": "model"})
def vocab_ce(tokens: Tensor["batch", "length"],
             targets: Tensor["batch", "length"],
             embed: Tensor["vocab", "d_model"],
             unembed: Tensor["d_model", "vocab"]) -> Tensor[()]:
    x: Tensor["batch", "length", "d_model"] = embed[tokens]
    logits = jnp.einsum("bld,dv->blv", jnp.tanh(x), unembed)
    picked = jnp.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
    return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - picked)


@mesh(batch=2, model=4, rules={"vocab": "model"})
def one_hot_ce(tokens: Tensor["batch", "length"],
               targets: Tensor["batch", "length"],
               embed: Tensor["vocab", "d_model"]) -> Tensor[()]:
    x: Tensor["batch", "length", "d_model"] = jnp.take(embed, tokens, axis=0)
    logits = jnp.einsum("bld,vd->blv", x, embed)
    labels = jax.nn.one_hot(targets, logits.shape[-1])
    return -jnp.mean(jnp.sum(labels * jax.nn.log_softmax(logits, axis=-1), axis=-1))


@mesh(batch=2, model=4, rules={"heads": "model", "d_qkv": "model"})
def heads_roundtrip(x: Tensor["batch", "length", "d_model"],
                    w: Tensor["d_model", "d_qkv"]) -> Tensor["batch", "length", "d_qkv"]:
    b, l, d = x.shape
    y = jnp.einsum("bld,de->ble", x, w)
    h: Tensor["batch", "length", "heads", "d_head"] = y.reshape(b, l, 8, -1)
    h = jnp.swapaxes(jax.nn.relu(h), 2, 3)
    h = jnp.moveaxis(h, 3, 2)
    z: Tensor["batch", "length", "d_qkv"] = h.reshape(b, l, -1)
    return z * 2.0


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def mixed_precision(x: Tensor["batch", "d_model"],
                    w1: Tensor["d_model", "d_ff"],
                    w2: Tensor["d_ff", "d_model"]) -> Tensor["batch", "d_model"]:
    h = jax.nn.relu(jnp.einsum("bd,df->bf", x.astype(jnp.bfloat16), w1.astype(jnp.bfloat16)))
    y = jnp.einsum("bf,fd->bd", h, w2.astype(jnp.bfloat16))
    return y.astype(jnp.float32)
