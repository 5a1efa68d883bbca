"""``jax.lax.dynamic_slice`` as decoding and sliding-window code writes it: a window at a traced
position along an unsplit dim, the split dims read whole with their sizes written as ``B, S, H, K =
cache.shape`` names or ``cache.shape[i]`` inline (each replaced by the block's size), inside a
``fori_loop`` too, and a read of a partial sum (kept partial: a slice is linear).  Before, "jax.lax
.dynamic_slice has no meshify rule"."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model", "d_ff": "model"})
def f(cache: Tensor["batch", "seq", "heads", "k"], x: Tensor["batch", "seq", "d_ff"],
      w: Tensor["d_ff", "heads", "k"], pos: Tensor[()]):
    B, S, H, K = cache.shape
    window = jax.lax.dynamic_slice(cache, (0, pos, 0, 0), (B, 3, H, K))
    last = jax.lax.dynamic_slice(cache, (0, 0, 0, pos - 2), (cache.shape[0], S, cache.shape[2], 1))
    proj = jnp.einsum("bsf,fhk->bshk", x, w)  # a partial sum over split d_ff, heads whole
    part = jax.lax.dynamic_slice(proj, (0, pos, 0, 0), (B, 2, proj.shape[2], K))

    def step(t, acc):
        return acc + jnp.sum(jax.lax.dynamic_slice(cache, (0, pos + t, 0, 0), (B, 1, H, K)) ** 2)

    total = jax.lax.fori_loop(0, 3, step, jnp.float32(0))
    return jnp.mean(window ** 2) + jnp.mean(last) + jnp.mean(jnp.tanh(part)) + total


def inputs():
    rng = np.random.default_rng(52)
    return (rng.standard_normal((4, 8, 8, 2)).astype(np.float32), rng.standard_normal((4, 8, 16)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8, 2)).astype(np.float32), np.int32(3))
