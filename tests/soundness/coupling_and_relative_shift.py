"""Two classic shape tricks over split dims: a RealNVP/Glow coupling layer in a Python loop (split the channels
in halves, transform one, concatenate back: the joined dim is 'c?' for the user's 'c', one layout across
iterations), Transformer-XL's query ``(cat([mem, h]) @ w)[:, -qlen:]`` (the last qlen rows are as long as
h's dim qlen is read off) reshaped into heads, and its ``_rel_shift`` (a zero column concatenated on, reshaped from (q, k+1) to
(k+1, q), sliced, reshaped back) with batch and heads split: the sizes read off ``x.shape`` keep batch and
heads, and the trailing dims are merged and split as one group."""

from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh

EXPECT = "match"


def _rel_shift(x):
    bsz, n_head, qlen, klen = x.shape
    zero_pad = jnp.zeros((bsz, n_head, qlen, 1), dtype=x.dtype)
    x_padded = jnp.concatenate([zero_pad, x], axis=-1)
    x_padded = x_padded.reshape(bsz, n_head, klen + 1, qlen)
    return x_padded[:, :, 1:].reshape(bsz, n_head, qlen, klen)


@mesh(batch=2, model=4, rules={"heads": "model"})
def rel_shift(bd: Annotated[jax.Array, "batch", "heads", "q", "k"]):
    return jax.nn.softmax(_rel_shift(bd), axis=-1)


@mesh(batch=2, model=4, rules={"hidden": "model"})
def coupling(x: Annotated[jax.Array, "batch", "c"], w1: Annotated[jax.Array, "half", "hidden"],
             w2: Annotated[jax.Array, "hidden", "c"]):
    logdet = jnp.zeros(x.shape[0])
    for k in range(3):
        a, b = jnp.split(x, 2, axis=-1)
        h = jnp.tanh(a @ w1) @ w2
        log_s, t = jnp.split(h, 2, axis=-1)
        b = b * jnp.exp(log_s) + t
        logdet = logdet + log_s.sum(-1)
        x = jnp.concatenate([b, a], axis=-1) if k % 2 == 0 else jnp.concatenate([a, b], axis=-1)
    return x, logdet


@mesh(batch=2, model=4, rules={"f": "model"})
def txl_query(mem: Annotated[jax.Array, "batch", "m", "d"], h: Annotated[jax.Array, "batch", "l", "d"],
              w: Annotated[jax.Array, "d", "f"]):
    B, L, _ = h.shape
    cat = jnp.concatenate([mem, h], axis=1)
    q = (cat @ w)[:, -L:]  # the last L rows: as long as h's 'l'
    return jnp.tanh(q.reshape(B, L, 4, 8)).sum(-1)


def inputs():
    rng = np.random.default_rng(0)
    bd = rng.normal(size=(4, 8, 8, 16)).astype(np.float32)
    x = rng.normal(size=(8, 8)).astype(np.float32)
    w1 = (rng.normal(size=(4, 16)) * 0.3).astype(np.float32)
    w2 = (rng.normal(size=(16, 8)) * 0.1).astype(np.float32)
    txl = [rng.normal(size=shape).astype(np.float32) for shape in ((4, 8, 16), (4, 8, 16), (16, 32))]
    return {"rel_shift": (bd,), "coupling": (x, w1, w2), "txl_query": tuple(txl)}
