"""Token and position embeddings as users write them: a vocab-split table looked up with ids, positions from
jnp.arange(T), a padding mask from ids != 0 used for a masked mean, the tied head h @ emb.T, the last
token's logits x[:, -1], stop_gradient on a baseline, jnp.mean over two axes."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "vocab": "model"})
def f(ids: Tensor["batch", "seq"], emb: Tensor["vocab", "d_model"], pos: Tensor["max_seq", "d_model"]):
    T = ids.shape[1]
    h = emb[ids] + pos[jnp.arange(T)]
    mask = (ids != 0).astype(h.dtype)
    pooled = jnp.sum(h * mask[..., None], axis=1) / jnp.maximum(jnp.sum(mask, axis=1, keepdims=True), 1.0)
    logits = h @ emb.T
    last = logits[:, -1]
    baseline = jax.lax.stop_gradient(jnp.mean(logits, axis=(0, 1)))
    return jnp.mean(pooled ** 2) + jnp.mean(jax.nn.logsumexp(last, axis=-1)) - jnp.mean(baseline)


def inputs():
    rng = np.random.default_rng(8)
    ids = rng.integers(0, 16, (4, 6)).astype(np.int32)
    ids[:, -2:] = 0
    return (ids, rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal((10, 8)).astype(np.float32))
