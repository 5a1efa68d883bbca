"""Grouped-query attention whose groups neither fit whole on a device nor share one kv head there: 12 query
heads over 4 devices (3 each) in groups of 2 (6 kv heads), so a device's query heads read parts of two kv
heads' groups.  Refused at call time with a fix, not a raw slicing error."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"heads": "model"})
def f(q: Tensor["batch", "seq", "heads", "hd"], k: Tensor["batch", "seq", "kv", "hd"],
      v: Tensor["batch", "seq", "kv", "hd"]):
    return jax.nn.dot_product_attention(q, k, v)


def inputs():
    rng = np.random.default_rng(4)
    return (rng.standard_normal((2, 4, 12, 4)).astype(np.float32), rng.standard_normal((2, 4, 6, 4)).astype(np.float32),
            rng.standard_normal((2, 4, 6, 4)).astype(np.float32))
