"""One position picked per row of a 3-D array, as CLIP pools its text tower at the end-of-text token
(``x[jnp.arange(x.shape[0]), ids.argmax(axis=-1)]``) and a decoder reads each sequence's last real token
(``h[jnp.arange(B), lengths - 1]``): the rows' other dims kept, batch and d_model split, positions negative and past
the end (indexing wraps and clamps them).  Before, "advanced indexing with an array beside indices other than ':'"
(a forced rewrite to take_along_axis)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_model": "model"})
def eot_pool(x: Tensor["batch", "ctx", "d_model"], ids: Tensor["batch", "ctx"], w: Tensor["d_model", "embed"]):
    pooled = x[jnp.arange(x.shape[0]), ids.argmax(axis=-1)]
    return pooled @ w


@mesh(batch=8)
def last_real(h: Tensor["batch", "seq", "d"], lengths: Tensor["batch"]):
    B = h.shape[0]
    return jnp.tanh(h[jnp.arange(B), lengths - 1]) * 2.0


def inputs():
    rng = np.random.default_rng(37)
    x = rng.standard_normal((4, 6, 8)).astype(np.float32)
    ids = rng.integers(0, 50, (4, 6)).astype(np.int32)
    w = rng.standard_normal((8, 3)).astype(np.float32)
    h = rng.standard_normal((8, 5, 2)).astype(np.float32)
    return {"eot_pool": (x, ids, w), "last_real": (h, np.array([1, 5, 0, 9, -2, 3, 2, 4], np.int32))}
