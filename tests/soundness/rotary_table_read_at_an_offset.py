"""A rotary table read at a decoding offset with ``jax.lax.dynamic_slice_in_dim(cos_cached, offset, L, 0)``: the
read dim is named by its size (``L = x.shape[1]``: the sequence), a size-1 read broadcasts, a literal count is its
own dim; ``jax.lax.dynamic_slice`` likewise.  Before: the read kept the table's 'max_len' and was refused against
'seq' (attack on rotary code).  (Left: a hint splitting a dynamic_slice's result along the sliced dim lets XLA:CPU
fold the block slice into it and lose JAX's clamping of the start; see the closing note of session 27.)"""
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


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model", "seq": "data"})
def g(x: Tensor["batch", "seq", "heads", "hd"], table: Tensor["max_len", "hd"], offset: Tensor[()]):
    s = jax.lax.dynamic_slice(table, (offset, 0), (x.shape[1], x.shape[3]))  # (the read dims named by size)
    return x * s[None, :, None, :]


def scenario(mod, pick):
    """Offsets inside the table and past its end (JAX clamps the start: 11 and 14 read from 10), and negative."""
    rng = np.random.default_rng(78)
    x, table = rng.standard_normal((4, 6, 8, 4)).astype(np.float32), rng.standard_normal((16, 4)).astype(np.float32)
    return {f"{fn}-{off}": pick(getattr(mod, fn))(x, table, np.array(off, np.int32))
            for fn in ("f", "g") for off in (3, 11, 14, -3)}


def inputs():
    return {}
