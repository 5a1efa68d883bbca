"""Model: causal multi-head attention, heads split, the mask from jnp.tril(jnp.ones((L, L))) with L = x.shape[1]."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(x: Tensor["batch", "length", "d"], wq: Tensor["d", "heads", "d_head"], wk: Tensor["d", "heads", "d_head"],
      wv: Tensor["d", "heads", "d_head"], wo: Tensor["heads", "d_head", "d"]) -> Tensor["batch", "length", "d"]:
    L = x.shape[1]
    q = jnp.einsum("bld,dhk->bhlk", x, wq)
    k = jnp.einsum("bld,dhk->bhlk", x, wk)
    v = jnp.einsum("bld,dhk->bhlk", x, wv)
    scores = jnp.einsum("bhlk,bhmk->bhlm", q, k) / jnp.sqrt(q.shape[-1])
    mask = jnp.tril(jnp.ones((L, L)))
    scores = jnp.where(mask == 1, scores, -1e9)
    attn = jax.nn.softmax(scores, axis=-1)
    o = jnp.einsum("bhlm,bhmk->bhlk", attn, v)
    return x + jnp.einsum("bhlk,hkd->bld", o, wo)


def inputs():
    rng = np.random.default_rng(141)
    w = lambda *s: (0.3 * rng.standard_normal(s)).astype(np.float32)  # noqa: E731
    return rng.standard_normal((2, 6, 8)).astype(np.float32), w(8, 4, 2), w(8, 4, 2), w(8, 4, 2), w(4, 2, 8)
