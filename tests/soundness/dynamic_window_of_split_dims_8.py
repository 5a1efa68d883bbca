"""Dynamic slices along a sequence split over 8 devices (blocks of 2 rows) with starts that clamp: past the end
(40: JAX reads the last 5 rows), negative from the end (-7), and an int8 start; a window longer than a block
spans four devices; dynamic_update_slice_in_dim with a clamped start.  Each device reads (writes) only the rows
its block holds; the window, whole, is a partial sum over 'seq'."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(seq=8)
def f(x: Tensor["batch", "seq", "d"], u: Tensor["batch", "n", "d"], i: Tensor[()], j: Tensor[()],
      k: Tensor[()]):
    late = jax.lax.dynamic_slice_in_dim(x, i, 5, axis=1)
    back = jax.lax.dynamic_slice_in_dim(x, j, 7, axis=-2)
    small = jax.lax.dynamic_slice_in_dim(x, k, 3, axis=1)
    written = jax.lax.dynamic_update_slice_in_dim(x, u * 3.0, i, 1)
    return jnp.sin(late), back * 2.0, small, written


def inputs():
    rng = np.random.default_rng(3204)
    x = rng.standard_normal((2, 16, 4)).astype(np.float32)
    u = rng.standard_normal((2, 5, 4)).astype(np.float32)
    return {"f": (x, u, np.int32(40), np.int32(-7), np.int8(-3))}
