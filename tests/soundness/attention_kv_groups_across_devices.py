"""Grouped-query attention whose groups neither fit whole on a device nor share one kv head there: 12 query
heads over 4 devices (3 each) in groups of 2 (6 kv heads), so a device's query heads read parts of two kv
heads' groups.  Each device takes the kv head of each of its query heads (as many kv heads as query heads);
before, a call-time error (and before that, a raw slicing error).  Also 24 query heads in groups of 8 on 8 devices
(as the fuzz wrote it, seed 4405)."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(q: Tensor["batch", "seq", "heads", "hd"], k: Tensor["batch", "seq", "kv", "hd"],
      v: Tensor["batch", "seq", "kv", "hd"]):
    return jax.nn.dot_product_attention(q, k, v)


@mesh(model=8, rules={"heads": "model"})
def unbatched(q: Tensor["seq", "heads", "hd"], k: Tensor["seq", "kv", "hd"], v: Tensor["seq", "kv", "hd"]):
    return jax.nn.dot_product_attention(q, k, v, is_causal=True)


def inputs():
    rng = np.random.default_rng(4)

    def r(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    return {"f": (r(2, 4, 12, 4), r(2, 4, 6, 4), r(2, 4, 6, 4)), "unbatched": (r(5, 24, 4), r(5, 3, 4), r(5, 3, 4))}
