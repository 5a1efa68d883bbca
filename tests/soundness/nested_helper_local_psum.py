"""A helper calling a helper whose psum'd value reads one of its own locals (``h = x @ p.w1; return h @
p.w2`` inside ``block``): the records carried through two helpers.  Before, a TypeError inside meshify
(explain's value identities of a nested helper's records read as a caller's); also ``x[None] @ w`` (a
size-1 batch dim into a matmul: an AssertionError in the layout planner) as a per-example function writes
it."""
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Layer(NamedTuple):
    w1: Tensor["d_model", "d_ff"]
    w2: Tensor["d_ff", "d_model"]


def ffn(x, p):
    h = x @ p.w1
    return h @ p.w2


def block(x, p):
    return x + ffn(x, p) + ffn(jnp.tanh(x), p)


def one(x, p):
    return (x[None] @ p.w1)[0]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(p: Layer, x: Tensor["batch", "d_model"], y: Tensor["length", "d_model"]
      ) -> tuple[Tensor["batch", "d_model"], Tensor["length", "d_ff"]]:
    return block(block(x, p), p), one(y, p)


def inputs():
    rng = np.random.default_rng(17)
    return (Layer((rng.standard_normal((8, 16)) * 0.2).astype(np.float32),
                  (rng.standard_normal((16, 8)) * 0.2).astype(np.float32)),
            rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((3, 8)).astype(np.float32))
