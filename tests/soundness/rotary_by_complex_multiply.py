"""Rotary embeddings as Meta's Llama reference writes them, ported to JAX: pairs of features made complex with
``jax.lax.complex(x[..., ::2], x[..., 1::2])``, multiplied by ``jnp.exp(1j * freqs)`` from ``jnp.outer``, and
unpacked with ``jnp.stack([jnp.real(..), jnp.imag(..)], -1).reshape(*x.shape)``, heads split over 'model'; with
``jnp.log10``/``jnp.trunc``/``jnp.fabs``/``jnp.sinc`` on split values.  Before: "jax.lax.complex has no meshify
rule" with a fix to unsplit batch and heads (the elementwise table missed lax.complex, jnp.log10, trunc, rint,
fabs, deg2rad and two dozen more; tests/test_elementwise_surface.py now scans JAX's namespaces for them)."""
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh

EXPECT = "match"


def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (jnp.arange(0, dim, 2)[: (dim // 2)].astype(jnp.float32) / dim))
    t = jnp.arange(end)
    return jnp.exp(1j * jnp.outer(t, freqs))


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = jax.lax.complex(xq[..., ::2], xq[..., 1::2])
    xk_ = jax.lax.complex(xk[..., ::2], xk[..., 1::2])
    fc = freqs_cis[None, :, None, :]
    xq_out = jnp.stack([jnp.real(xq_ * fc), jnp.imag(xq_ * fc)], axis=-1).reshape(*xq.shape)
    xk_out = jnp.stack([jnp.real(xk_ * fc), jnp.imag(xk_ * fc)], axis=-1).reshape(*xk.shape)
    return xq_out.astype(xq.dtype), xk_out.astype(xk.dtype)


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(x: Annotated[jax.Array, "batch", "seq", "dim"], wq: Annotated[jax.Array, "dim", "heads", "hd"],
      wk: Annotated[jax.Array, "dim", "heads", "hd"], wv: Annotated[jax.Array, "dim", "heads", "hd"],
      wo: Annotated[jax.Array, "heads", "hd", "dim"]) -> Annotated[jax.Array, "batch", "seq", "dim"]:
    B, L, _ = x.shape
    q = jnp.einsum("bld,dhk->blhk", x, wq)
    k = jnp.einsum("bld,dhk->blhk", x, wk)
    v = jnp.einsum("bld,dhk->blhk", x, wv)
    q, k = apply_rotary_emb(q, k, precompute_freqs_cis(q.shape[-1], L))
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1])
    s = jnp.where(jnp.tril(jnp.ones((L, L), bool)), s, jnp.finfo(s.dtype).min)
    o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v)
    o = o + 0.1 * jnp.log10(1.0 + jnp.fabs(o)) - 0.01 * jnp.trunc(3.0 * o) + 0.1 * jnp.sinc(o)
    return jnp.einsum("bqhd,hdm->bqm", o, wo)


def inputs():
    rng = np.random.default_rng(3)

    def r(*shape):
        return (rng.standard_normal(shape) * 0.3).astype(np.float32)

    return r(4, 8, 16), r(16, 4, 8), r(16, 4, 8), r(16, 4, 8), r(4, 8, 16)
