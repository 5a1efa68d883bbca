"""Rotary embeddings whose halves are joined back: the result has the dim it was cut from, so it can be
scattered into a table of that dim (``.at[ids].add``), put through a hinted reshape and contracted with a
weight of that dim.  Spellings: even/odd entries (``x[..., ::2]``, ``x[..., 1::2]``) with frequencies
``jnp.arange(0, D, 2)``; rotate-half with a named half (``half = D // 2``, ``x[..., half:]``); frequencies
``jnp.arange(x.shape[-1] // 2)`` joined with ``jnp.arange(0, D, 2)``; an odd dim (5 = 3 + 2 entries) joined
from its even and odd entries.  Before, the joined dim was ``d_head?`` (another size than ``d_head``) and
the scatter and the reshape were refused (fuzz: unprovoked 517caf38, c0362b47)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def interleaved(x):
    freqs = jnp.arange(0, x.shape[-1], 2) * 0.1
    c, s = jnp.cos(freqs), jnp.sin(freqs)
    return jnp.concatenate([x[..., ::2] * c - x[..., 1::2] * s, x[..., 1::2] * c + x[..., ::2] * s], axis=-1)


def rotate_half(x):
    D = x.shape[-1]
    half = D // 2
    inv = jnp.concatenate([jnp.arange(0, D, 2) * 0.05, jnp.arange(x.shape[-1] // 2) * 0.07])
    return x * jnp.cos(inv) + jnp.concatenate([-x[..., half:], x[..., :half]], axis=-1) * jnp.sin(inv)


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model"})
def f(x: Tensor["batch", "length", "d_model"], wq: Tensor["d_model", "heads", "d_head"],
      wo: Tensor["heads", "d_head", "d_model"], ids: Tensor["batch"], table: Tensor["vocab", "heads", "d_head"],
      odd: Tensor["batch", "d_odd"], wd: Tensor["d_odd", "d_model"]):
    B, L, _ = x.shape
    q = jnp.einsum("bld,dhk->blhk", x, wq)
    r = rotate_half(interleaved(q))
    filled = table.at[ids].add(r[:, 0])
    flat: Tensor["batch", "length", "hd"] = r.reshape(B, L, -1)
    out = jnp.einsum("blhk,hkd->bld", r, wo)
    joined = jnp.concatenate([odd[:, 1::2] * 2.0, odd[:, ::2]], axis=-1)
    return jnp.mean(out ** 2) + jnp.mean(filled * table) + jnp.mean(flat ** 2) * 0.5 + jnp.mean(joined @ wd)


def inputs():
    rng = np.random.default_rng(517)
    return (rng.standard_normal((4, 6, 16)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8, 8)).astype(np.float32),
            0.3 * rng.standard_normal((8, 8, 16)).astype(np.float32),
            np.array([0, 3, -1, 9], np.int32),
            rng.standard_normal((5, 8, 8)).astype(np.float32),
            rng.standard_normal((4, 5)).astype(np.float32),
            rng.standard_normal((5, 16)).astype(np.float32))
