"""Pytree modules (a NamedTuple with ``__call__``) passed through JAX's transforms as Equinox-style code does:
``jax.vmap(m)(x)`` over the batch, ``jax.lax.scan`` over a module of stacked layers (``layer(h)`` in the body,
``layer: MLP`` typed), and a module built from the scanned slices and called where it is made
(``MLP(w1, w2)(h)``)."""
from typing import NamedTuple

import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class MLP(NamedTuple):
    w1: Tensor["d", "d_ff"]
    w2: Tensor["d_ff", "d"]

    def __call__(self, x):
        return jax.nn.gelu(x @ self.w1) @ self.w2


class Stacked(NamedTuple):
    w1: Tensor["layers", "d", "d_ff"]
    w2: Tensor["layers", "d_ff", "d"]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(m: MLP, s: Stacked, x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    def step(h, layer: MLP):
        return h + layer(h), None

    def built(h, ws):
        return h + MLP(ws[0], ws[1])(h), None

    h, _ = jax.lax.scan(step, jax.vmap(m)(x), MLP(s.w1, s.w2))
    h, _ = jax.lax.scan(built, h, (s.w1, s.w2))
    return h


def inputs():
    rng = np.random.default_rng(3605)

    def a(*shape):
        return (rng.standard_normal(shape) * 0.3).astype(np.float32)

    return MLP(a(8, 16), a(16, 8)), Stacked(a(2, 8, 16), a(2, 16, 8)), a(4, 8)
