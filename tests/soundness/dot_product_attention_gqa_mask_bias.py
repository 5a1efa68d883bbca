"""jax.nn.dot_product_attention as modern model code calls it (it had no rule: refused on split values):
grouped-query attention with kv heads split as the query heads are, is_causal, a padding mask [batch, 1, 1,
kv_seq] from the ids, a relative bias [heads, q_seq, kv_seq] with heads split, query/kv lengths per batch
row, batch over 'data' and heads over 'model'."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model", "kv_heads": "model"})
def f(x: Tensor["batch", "seq", "d_model"], ids: Tensor["batch", "seq"], wq: Tensor["d_model", "heads", "d_head"],
      wk: Tensor["d_model", "kv_heads", "d_head"], wv: Tensor["d_model", "kv_heads", "d_head"],
      rel: Tensor["heads", "seq", "seq2"], wo: Tensor["heads", "d_head", "d_model"]):
    q = jnp.einsum("btd,dhk->bthk", x, wq)
    k = jnp.einsum("btd,dhk->bthk", x, wk)
    v = jnp.einsum("btd,dhk->bthk", x, wv)
    pad: Tensor["batch", "1", "1", "seq"] = (ids != 0)[:, None, None, :]
    a = jax.nn.dot_product_attention(q, k, v, mask=pad, is_causal=True)
    b = jax.nn.dot_product_attention(q, k, v, rel[None], scale=0.3)
    lengths = jnp.sum(ids != 0, axis=-1).astype(jnp.int32)
    c = jax.nn.dot_product_attention(q, k, v, query_seq_lengths=lengths, key_value_seq_lengths=lengths)
    return jnp.einsum("bthk,hkd->btd", a + b + c, wo)


def inputs():
    rng = np.random.default_rng(21)
    ids = rng.integers(1, 9, (4, 6)).astype(np.int32)
    ids[:, -2:] = 0
    return (rng.standard_normal((4, 6, 16)).astype(np.float32), ids,
            0.3 * rng.standard_normal((16, 8, 4)).astype(np.float32),
            0.3 * rng.standard_normal((16, 4, 4)).astype(np.float32),
            0.3 * rng.standard_normal((16, 4, 4)).astype(np.float32),
            0.3 * rng.standard_normal((8, 6, 6)).astype(np.float32),
            0.3 * rng.standard_normal((8, 4, 16)).astype(np.float32))
