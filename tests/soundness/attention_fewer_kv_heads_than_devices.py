"""Grouped-query attention through ``jax.nn.dot_product_attention`` with the query heads split and the kv heads
(their own dim, left whole by the rules) fewer than the devices: one kv head (multi-query attention, Gemma-2B),
2 kv heads on 4 devices, 2 on 8 (a group spans several devices), 4 on 4 and 8 on 4 (whole groups per device);
with a mask, a bias over the query heads, ``is_causal``, a scale, and without the batch dim.  Each device slices
the kv heads its query heads read (``mr.grouped_kv``); before, the kv heads were split like the query heads,
"cannot split axis 2 of a [2, 8, 2, 4] array over mesh axis 'model'" at call time."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"

QKV = Tensor["batch", "seq", "heads", "hd"]
KV = Tensor["batch", "seq", "kv", "hd"]


@mesh(batch=2, model=4, rules={"heads": "model"})
def mqa(x: Tensor["batch", "seq", "d"], wq: Tensor["d", "heads", "hd"], wk: Tensor["d", "kv", "hd"],
        wv: Tensor["d", "kv", "hd"], mask: Tensor["batch", "seq"]):
    q = jnp.einsum("bsd,dhk->bshk", x, wq)
    k = jnp.einsum("bsd,dhk->bshk", x, wk)
    v = jnp.einsum("bsd,dhk->bshk", x, wv)
    keep = mask[:, None, None, :].astype(bool)
    return jax.nn.dot_product_attention(q, k, v, mask=keep, scale=0.3)


@mesh(batch=2, model=4, rules={"heads": "model"})
def two_on_four(q: QKV, k: KV, v: KV, bias: Tensor["heads", "seq", "seq2"]):
    return jax.nn.dot_product_attention(q, k, v, bias[None], is_causal=True)


@mesh(model=8, rules={"heads": "model", "batch": None})
def two_on_eight(q: QKV, k: KV, v: KV):
    return jax.nn.dot_product_attention(q, k, v, is_causal=True).sum(axis=-1)


@mesh(batch=2, model=4, rules={"heads": "model"})
def whole_groups(q: QKV, k: KV, v: KV, k8: Tensor["batch", "seq", "kv8", "hd"],
                 v8: Tensor["batch", "seq", "kv8", "hd"]):
    return jax.nn.dot_product_attention(q, k, v), jax.nn.dot_product_attention(q, k8, v8)


@mesh(model=4, rules={"heads": "model"})
def unbatched(q: Tensor["seq", "heads", "hd"], k: Tensor["seq", "kv", "hd"], v: Tensor["seq", "kv", "hd"]):
    return jax.nn.dot_product_attention(q, k, v, is_causal=True)


def inputs():
    rng = np.random.default_rng(3)

    def r(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    mask = np.ones((4, 8), np.int32)
    mask[1, 5:] = 0
    mask[3, 2:] = 0
    return {
        "mqa": (r(4, 8, 16), r(16, 8, 4, scale=0.3), r(16, 1, 4, scale=0.3), r(16, 1, 4, scale=0.3), mask),
        "two_on_four": (r(4, 8, 8, 4), r(4, 8, 2, 4), r(4, 8, 2, 4), r(8, 8, 8, scale=0.5)),
        "two_on_eight": (r(2, 6, 8, 4), r(2, 6, 2, 4), r(2, 6, 2, 4)),
        "whole_groups": (r(4, 6, 8, 4), r(4, 6, 4, 4), r(4, 6, 4, 4), r(4, 6, 8, 4), r(4, 6, 8, 4)),
        "unbatched": (r(6, 8, 4), r(6, 1, 4), r(6, 1, 4)),
    }
