"""Shape and product functions real code calls that had no rule (refused on split values): jnp.expand_dims
(negative and tuple axes), jnp.squeeze / x.squeeze(axis) of size-1 dims, jnp.outer of vectors split over
two axes and of one vector with itself, jnp.inner and jnp.tensordot (an int and two sequences) contracting
a split dim, jnp.isinf and jnp.nan_to_num of values holding NaN and inf."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "d": "model", "e": "data"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "f"], u: Tensor["d"], v: Tensor["e"], k: Tensor["d", "f"]):
    y = jnp.expand_dims(x, -1) * w                      # [batch, d, f]
    z = jnp.squeeze(jnp.expand_dims(x, (0, 2)), axis=(0, 2))
    s = y[:, :, :1].squeeze(-1)                         # [batch, d]
    o = jnp.outer(u, v)                                 # [d, e] split over model x data
    oo = jnp.outer(u, u)
    i = jnp.inner(x, u)                                 # [batch], contracted d
    t1 = jnp.tensordot(x, w, axes=1)                    # [batch, f]
    t2 = jnp.tensordot(w, k, axes=([0, 1], [0, 1]))    # scalar
    bad = jnp.where(x > 1.0, jnp.inf, jnp.where(x < -1.0, jnp.nan, x))
    clean = jnp.nan_to_num(bad, nan=0.5, posinf=2.0)
    return (jnp.sum(z * s) + jnp.sum(o) * 0.1 + jnp.mean(oo) + jnp.sum(i) + jnp.sum(jnp.tanh(t1)) + t2 * 0.01
            + jnp.sum(clean) + jnp.sum(jnp.isinf(bad)))


def inputs():
    rng = np.random.default_rng(12)
    return (rng.standard_normal((4, 8)).astype(np.float32), 0.3 * rng.standard_normal((8, 6)).astype(np.float32),
            rng.standard_normal(8).astype(np.float32), rng.standard_normal(4).astype(np.float32),
            0.3 * rng.standard_normal((8, 6)).astype(np.float32))
