"""jnp.nansum / nanmean / nanvar / nanstd / nanmax / nanmin over split and unsplit dims, with NaN entries
scattered so that one device's block of a row is all NaN, one whole row is NaN, and a row holds -inf
beside NaN: NaN entries are skipped globally (a per-device skip would be wrong), a row of NaN gives NaN."""

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_model": "model"})
def f(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]):
    h = x @ w  # partial over 'model': completed before each reduction
    return (jnp.nansum(x, axis=-1), jnp.nanmean(x, axis=1), jnp.nanvar(x, axis=-1),
            jnp.nanstd(x, axis=-1, ddof=1, keepdims=True), jnp.nanmax(x, axis=-1), jnp.nanmin(x, -1),
            jnp.nanmean(x), jnp.nanmax(x, axis=(0, 1)),
            jnp.nanmean(x, axis=0), jnp.nanvar(h, axis=-1), jnp.nanmax(h, axis=0))


@mesh(batch=8, rules={"d_model": None})
def g(x: Tensor["batch", "d_model"]):
    return jnp.nanmean(x, axis=0), jnp.nansum(x, axis=0, dtype=jnp.float32), jnp.nanstd(x, axis=0)


def inputs():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 16)).astype(np.float32)
    x[0, :4] = np.nan  # one device's block of row 0
    x[1, :] = np.nan  # a whole row
    x[2, 3] = -np.inf
    x[2, 5] = np.nan
    x[5, 9] = np.nan
    w = np.nan_to_num(rng.normal(size=(16, 8)).astype(np.float32))
    x16 = np.where(np.isnan(x), np.nan, x).astype(np.float16)
    return {"f": (x, w), "g": (x16,)}
