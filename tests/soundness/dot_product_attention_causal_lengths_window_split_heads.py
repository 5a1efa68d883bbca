"""jax.nn.dot_product_attention with heads split: is_causal with scale=, query/key_value_seq_lengths, local_window_size."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(
    q: Tensor["batch", "seq", "heads", "hd"],
    k: Tensor["batch", "seq", "heads", "hd"],
    v: Tensor["batch", "seq", "heads", "hd"],
    lens: Tensor["batch"],
) -> Tensor["batch", "seq", "heads", "hd"]:
    a = jax.nn.dot_product_attention(q, k, v, is_causal=True, scale=0.3)
    b = jax.nn.dot_product_attention(q, k, v, query_seq_lengths=lens, key_value_seq_lengths=lens)
    c = jax.nn.dot_product_attention(q, k, v, local_window_size=(2, 1))
    return a + b + c


def inputs():
    rng = np.random.default_rng(24)
    r = lambda: rng.standard_normal((2, 6, 8, 4)).astype(np.float32)
    return r(), r(), r(), np.array([6, 3], np.int32)
