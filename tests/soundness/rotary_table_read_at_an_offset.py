"""A rotary table read at a decoding offset with ``jax.lax.dynamic_slice_in_dim(cos_cached, offset, L, 0)``: the
read dim is named by its size (``L = x.shape[1]``: the sequence), a size-1 read broadcasts, a literal count is its
own dim.  Before: the read kept the table's 'max_len' and was refused against 'seq' (attack on rotary code)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model", "seq": "data"})
def f(x: Tensor["batch", "seq", "heads", "hd"], cos_cached: Tensor["max_len", "hd"], offset: Tensor[()]):
    L = x.shape[1]
    c = jax.lax.dynamic_slice_in_dim(cos_cached, offset, L, 0)
    one = jax.lax.dynamic_slice_in_dim(cos_cached, offset, 1, 0)
    four = jax.lax.dynamic_slice_in_dim(cos_cached, offset, 4, 0)
    return x * c[None, :, None, :] + one[None][:, :, None, :] + four.sum()


def inputs():
    rng = np.random.default_rng(78)
    return (rng.standard_normal((4, 6, 8, 4)).astype(np.float32), rng.standard_normal((16, 4)).astype(np.float32),
            np.array(3, np.int32))
