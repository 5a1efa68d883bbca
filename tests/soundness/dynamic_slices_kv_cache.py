"""A key/value cache as decoding loops write it with ``jax.lax``: ``dynamic_update_slice(cache, new,
(0, pos, 0, 0))`` and ``dynamic_update_slice_in_dim(..., axis=1)`` at a traced position, read back by
``dynamic_slice_in_dim`` and ``dynamic_index_in_dim``, in a ``fori_loop`` too; the cache split over
batch and heads, the new entries arriving split otherwise (heads whole: sliced on their way in), a
partial sum written (completed first).  Before, "dynamic_update_slice has no meshify rule"."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model", "d_ff": "model"})
def f(cache: Tensor["batch", "seq", "heads", "k"], x: Tensor["batch", "one", "d_ff"],
      w: Tensor["d_ff", "heads", "k"], pos: Tensor[()]):
    new = jnp.einsum("bof,fhk->bohk", x, w)  # a partial sum over split d_ff, heads whole
    cache = jax.lax.dynamic_update_slice(cache, new, (0, pos, 0, 0))

    def step(t, c):
        return jax.lax.dynamic_update_slice_in_dim(c, jnp.tanh(new), pos + t + 1, axis=1)

    cache = jax.lax.fori_loop(0, 2, step, cache)
    window = jax.lax.dynamic_slice_in_dim(cache, pos, 3, axis=1)
    last = jax.lax.dynamic_index_in_dim(cache, pos + 2, axis=1, keepdims=False)
    return jnp.mean(cache ** 2) + jnp.mean(window) + jnp.mean(last ** 2)


def inputs():
    rng = np.random.default_rng(48)
    return (rng.standard_normal((4, 8, 8, 2)).astype(np.float32), rng.standard_normal((4, 1, 16)).astype(np.float32),
            0.3 * rng.standard_normal((16, 8, 2)).astype(np.float32), np.int32(3))
