"""Cross-entropy as tutorials write it, picking each row's log-probability at its label by indexing:
``logp[jnp.arange(B), labels]`` and, over a sequence, ``logp[jnp.arange(B)[:, None], jnp.arange(L)[None, :],
labels]``; the vocabulary split (a masked local lookup) and the batch split; labels negative (wrapped) and
out of range (clamped, as indexing does); gradients through the picked entries.  Before, "advanced
indexing with an array beside indices other than ':'", a forced change to take_along_axis."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "vocab": "model"})
def f(x: Tensor["batch", "length", "d_model"], head: Tensor["d_model", "vocab"], labels: Tensor["batch", "length"],
      last: Tensor["batch"]):
    logp = jax.nn.log_softmax(jnp.einsum("bld,dv->blv", x, head), axis=-1)
    B, L, _ = logp.shape
    tokens = logp[jnp.arange(B)[:, None], jnp.arange(L)[None, :], labels]
    final = logp[:, -1]
    picked = final[jnp.arange(final.shape[0]), last]
    return -jnp.mean(tokens) - jnp.mean(picked)


def inputs():
    rng = np.random.default_rng(83)
    return (rng.standard_normal((4, 6, 8)).astype(np.float32), 0.3 * rng.standard_normal((8, 16)).astype(np.float32),
            rng.integers(-20, 20, (4, 6)).astype(np.int32), rng.integers(-3, 19, (4,)).astype(np.int32))
