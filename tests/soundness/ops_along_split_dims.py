"""Ops along a dim split over a mesh axis that were refused (MSH030) and now run, matching one device, gradients
included: ``jnp.ptp`` (pmax and pmin), ``jnp.average`` (plain, 1-d and same-shape ``weights=``, ``returned=``:
two psums), ``jnp.fliplr``/``flipud`` and ``x[:, ::-1]`` (``jnp.flip``'s mirror-device ppermute), ``jax.lax``'s
cumulative ops with ``reverse=`` (local scan combined with the all-gathered shard totals; cumlogsumexp by a
max-shifted logsumexp of them), ``jnp.diff`` (a one-row halo where an end of one row keeps the dim's length,
else the rows gathered, as a median's) and ``jnp.nanmedian``/``quantile``/``percentile``/``nanquantile``
(rows gathered, as ``jnp.median``'s).  The last function runs each along the unsplit dim (batch split)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def reductions(x: Tensor["batch", "d"], w: Tensor["d"]):
    return (jnp.ptp(x, axis=1), jnp.ptp(x, axis=(0, 1), keepdims=True), jnp.average(x, axis=1),
            jnp.average(x, axis=1, weights=w), jnp.average(x, axis=-1, weights=x * x, returned=True),
            jnp.average(x, axis=1, returned=True), jnp.average(x))


@mesh(batch=2, model=4, rules={"d": "model"})
def flips(x: Tensor["batch", "d"]):
    return (jnp.fliplr(x) * 2.0, jnp.flipud(x), x[:, ::-1] + x, x[1, ::-1], jnp.fliplr(x[::-1, ::-1]), x[:, -1::-1],
            x[:, None:None:-1])


@mesh(batch=2, model=4, rules={"d": "model"})
def scans(x: Tensor["batch", "d"]):
    return (jax.lax.cumsum(x, axis=1), jax.lax.cumsum(x, axis=1, reverse=True), jax.lax.cumlogsumexp(x, axis=1),
            jax.lax.cumlogsumexp(x, axis=1, reverse=True), jax.lax.cummax(x, axis=1),
            jax.lax.cummin(x, axis=1, reverse=True), jax.lax.cumprod(x * 0.5 + 1.0, axis=1))


@mesh(batch=2, model=4, rules={"d": "model"})
def diffs(x: Tensor["batch", "d"]):
    return (jnp.diff(x, axis=1), jnp.diff(x, axis=1, prepend=0.0) + x, jnp.diff(x, axis=-1, append=x[:, :1]),
            jnp.diff(x, n=2, axis=1))


@mesh(batch=2, model=4, rules={"d": "model"})
def quantiles(x: Tensor["batch", "d"], q: Tensor["quantiles"]):
    return (jnp.median(x, axis=1), jnp.nanmedian(x, axis=1), jnp.quantile(x, 0.3, axis=1),
            jnp.percentile(x, 75.0, axis=1, keepdims=True), jnp.nanquantile(x, q, axis=1),
            jnp.quantile(x, 0.25, axis=1, method="nearest"))


@mesh(batch=2, model=4)
def unsplit(x: Tensor["batch", "d"], w: Tensor["d"], q: Tensor["quantiles"]):
    return (jnp.ptp(x, axis=1), jnp.average(x, axis=1, weights=w, returned=True), jnp.fliplr(x), x[:, ::-1],
            jax.lax.cumlogsumexp(x, axis=1), jax.lax.cummax(x, axis=1, reverse=True), jnp.diff(x, axis=1),
            jnp.nanmedian(x, axis=1), jnp.quantile(x, q, axis=1), jnp.percentile(x, 30.0, axis=1))


def inputs():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    w = rng.uniform(0.5, 2.0, 16).astype(np.float32)
    q = np.array([0.1, 0.5, 0.9], np.float32)
    return {"reductions": (x, w), "flips": (x,), "scans": (x,), "diffs": (x,), "quantiles": (x, q),
            "unsplit": (x, w, q)}
