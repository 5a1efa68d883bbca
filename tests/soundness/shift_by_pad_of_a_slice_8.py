"""A token shift written as a pad of a slice (RWKV's time shift, jnp.pad(x[:, :-1], ((0, 0), (1, 0), (0, 0)))),
mixed with the unshifted rows, over 8 devices on the sequence: each block takes one row from the previous
device, the first block zeros; the padded dims given by @mesh(dims=...), where the slice alone (31 rows of 32)
was refused when rewriting.  And a left shift by 3 in bfloat16 with a constant fill."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


@mesh(seq=8, dims={"seq": 32})
def f(x: Tensor["batch", "seq", "d"], mix: Tensor["d"], y: Tensor["batch", "seq", "e"]):
    shifted = jnp.pad(x[:, :-1], ((0, 0), (1, 0), (0, 0)))
    mixed = x * mix + shifted * (1 - mix)
    later = jnp.pad(y[:, 3:], ((0, 0), (0, 3), (0, 0)), constant_values=0.25)
    return mixed, later


def inputs():
    rng = np.random.default_rng(3202)
    return (rng.standard_normal((2, 32, 8)).astype(np.float32), rng.uniform(size=(8,)).astype(np.float32),
            rng.standard_normal((2, 32, 4)).astype(jnp.bfloat16))
