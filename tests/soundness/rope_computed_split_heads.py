"""Rotary embeddings computed inside the model, as Llama-style code writes them: frequencies from
``jnp.arange(0, D, 2)`` or ``jnp.arange(D // 2)`` with ``D`` read off ``x.shape``, an outer product with
the positions, ``cos``/``sin`` indexed with ``None`` up to the activation's rank, the halves split by
``jnp.split`` / slices / strided slices and joined by ``concatenate`` / ``stack(...).reshape``; over
split heads and batch.  Before, "cannot infer the dims of 'cos'" (an arange of a size that is no dim's)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def rope_split(x, theta=10000.0):
    B, L, H, D = x.shape
    freqs = 1.0 / (theta ** (jnp.arange(0, D, 2, dtype=jnp.float32) / D))
    ang = jnp.outer(jnp.arange(L, dtype=jnp.float32), freqs)
    cos, sin = jnp.cos(ang)[None, :, None, :], jnp.sin(ang)[None, :, None, :]
    x1, x2 = jnp.split(x, 2, axis=-1)
    return jnp.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


def rope_interleaved(x):
    B, L, H, D = x.shape
    inv = 1.0 / (10000 ** (jnp.arange(D // 2) * 2.0 / D))
    ang = jnp.arange(L)[:, None] * inv
    c = jnp.cos(ang)[None, :, None, :]
    s = jnp.sin(ang)[None, :, None, :]
    x1, x2 = x[..., ::2], x[..., 1::2]
    return jnp.stack([x1 * c - x2 * s, x1 * s + x2 * c], axis=-1).reshape(x.shape)


def rope_halves(x):
    D = x.shape[-1]
    freqs = 1.0 / (10000 ** (jnp.arange(0, D, 2) / D))
    ang = jnp.arange(x.shape[1])[:, None] * freqs[None, :]
    cos = jnp.cos(ang)[None, :, None, :]
    sin = jnp.sin(ang)[None, :, None, :]
    x1, x2 = x[..., : D // 2], x[..., D // 2:]
    return jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model"})
def f(x: Tensor["batch", "length", "d_model"], wq: Tensor["d_model", "heads", "d_head"],
      wk: Tensor["d_model", "heads", "d_head"]):
    q = rope_split(jnp.einsum("bld,dhk->blhk", x, wq))
    k = rope_interleaved(jnp.einsum("bld,dhk->blhk", x, wk))
    scores = jnp.einsum("bqhk,bshk->bhqs", q, rope_halves(k))
    return jnp.mean(jax.nn.softmax(scores, axis=-1) ** 2) + jnp.mean(q * k)


def inputs():
    rng = np.random.default_rng(61)
    return (rng.standard_normal((4, 6, 16)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8, 8)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8, 8)).astype(np.float32))
