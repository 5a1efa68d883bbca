"""A shift along a split sequence written as a pad of a slice: jnp.pad(x[:, :-1], ((0, 0), (1, 0), (0, 0))) (a
token shift), its mirror jnp.pad(x[:, 1:], ((0, 0), (0, 1), (0, 0))), a shift by 2 with constant_values=, and the
border rows replaced jnp.pad(x[:, 1:-1], ..., constant_values=(5, 7)), 2x4 (batch, seq).  Before: refused at the
call, 'the slice [:-1] ... gives 15 rows, which do not split into 4 equal blocks' (the slice alone does not
divide, the padded result does).  Now the slice and its padding are one re-blocking: one ppermute of the rows
shifted across each boundary, the fill at the edge."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, seq=4)
def f(x: Tensor["batch", "seq", "d"]) -> Tensor["batch", "seq", "d"]:
    right = jnp.pad(x[:, :-1], ((0, 0), (1, 0), (0, 0)))
    left = jnp.pad(x[:, 1:], ((0, 0), (0, 1), (0, 0)))
    two = jnp.pad(x[:, :-2], ((0, 0), (2, 0), (0, 0)), constant_values=-1.5)
    edges = jnp.pad(x[:, 1:-1], ((0, 0), (1, 1), (0, 0)), constant_values=(5, 7))
    return jnp.tanh(right * 2.0 + left) * two + edges


def inputs():
    rng = np.random.default_rng(3201)
    return (rng.standard_normal((4, 16, 6)).astype(np.float32),)
