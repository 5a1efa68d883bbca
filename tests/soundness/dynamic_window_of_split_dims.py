"""Dynamic slices with a traced start along a split sequence, 2x4 (batch, seq): dynamic_slice_in_dim read whole
(a psum of the window), the same window wanted split (its hint maps 'win' to 'seq': a psum_scatter), dynamic_slice
reading a window of the split dim and of an unsplit one, and dynamic_update_slice_in_dim writing into the split dim.
Before: refused, 'dynamic_slice_in_dim along split dim 'seq''.  Now each device reads (writes) the rows of the
window its block holds, the start clamped in the whole dim as JAX clamps it; the starts include negatives and
starts past the end."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, seq=4, rules={"win": "seq"})
def f(x: Tensor["batch", "seq", "d"], u: Tensor["batch", "n", "d"], i: Tensor[()], j: Tensor[()]):
    whole = jax.lax.dynamic_slice_in_dim(x, i, 8, axis=1)
    split: Tensor["batch", "win", "d"] = jax.lax.dynamic_slice_in_dim(x * 2.0, j, 8, axis=1)
    both = jax.lax.dynamic_slice(x, (0, j, i), (x.shape[0], 5, 3))
    written = jax.lax.dynamic_update_slice_in_dim(x, jnp.tanh(u), i, axis=1)
    return jnp.tanh(whole), split, jnp.sum(both, axis=1), written


def inputs():
    rng = np.random.default_rng(3203)
    x = rng.standard_normal((4, 16, 6)).astype(np.float32)
    u = rng.standard_normal((4, 5, 6)).astype(np.float32)
    return {"f": (x, u, np.int32(6), np.int32(-3))}
