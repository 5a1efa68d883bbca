"""``x.at[...]`` updates as model code writes them: a column of a batch-split activation set from a
batch-split vector (``h.at[:, 0].set(v)``), a row range scaled (``.multiply``), a partial sum updated
(completed first: an update is not linear), a key-padding mask built by ``.at[:, -1].set(False)`` on a
whole array and passed to attention, ``.add`` of a number, ``.get()``, ``.min``/``.max`` clips.
Before, "attribute .at of array"."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "d_ff": "model", "heads": "model"})
def f(x: Tensor["batch", "seq", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"],
      wq: Tensor["d", "heads", "k"], v: Tensor["batch", "seq"]):
    h = x.at[:, :, 0].set(v)
    h = h.at[:, 1:3].multiply(0.5)
    p = jnp.tanh(h @ w1) @ w2  # a partial sum over split d_ff
    p = p.at[:, 0, :].add(1.0)
    q = jnp.einsum("bsd,dhk->bshk", h, wq)
    n = x.shape[1]
    mask = jnp.ones((n, n), dtype=bool).at[:, -1].set(False).at[0, -1].set(True)
    a = jax.nn.dot_product_attention(q, q, q, mask=mask)
    first = p.at[:, 0].get()
    clipped = p.at[:, :, 1].min(0.25).at[:, :, 2].max(-0.25)
    return jnp.mean(clipped ** 2) + jnp.mean(a ** 2) + jnp.mean(first)


def inputs():
    rng = np.random.default_rng(46)
    return (rng.standard_normal((4, 6, 8)).astype(np.float32), 0.3 * rng.standard_normal((8, 16)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8)).astype(np.float32), 0.3 * rng.standard_normal((8, 4, 2)).astype(np.float32),
            rng.standard_normal((4, 6)).astype(np.float32))
