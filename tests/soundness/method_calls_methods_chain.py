"""Class-based model code: ``forward`` (@mesh) calls ``self.block`` which calls ``self.attend`` and
``self.norm``, each reading ``self.cfg`` and ``self.eps``; ``self.mlp`` returns a partial sum (contracted
split d_ff) its caller adds; gradients through x and the weights.  (A subclass overriding ``norm`` is
refused at the call: tests/test_methods.py.)"""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
GRAD = False  # (scenario: gradients below, through the sharded method)


class Cfg(NamedTuple):
    heads: int = 4


class Model:
    def __init__(self, cfg: Cfg, eps: float = 1e-6):
        self.cfg = cfg
        self.eps = eps

    def norm(self, x):
        return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + self.eps)

    def attend(self, x, wq, wk):
        q = jnp.einsum("bld,dhk->blhk", x, wq)
        k = jnp.einsum("bld,dhk->blhk", x, wk)
        s = jnp.einsum("bqhk,bshk->bhqs", q, k) / jnp.sqrt(q.shape[-1] * 1.0)
        return jnp.mean(jax.nn.softmax(s, axis=-1), axis=(1, 3))

    def mlp(self, x, w1, w2):
        return jax.nn.relu(x @ w1) @ w2

    def block(self, x, wq, wk, w1, w2):
        h = self.norm(x)
        x = x + self.attend(h, wq, wk)[:, :, None] * h
        return x + self.mlp(self.norm(x), w1, w2)

    @mesh(batch=2, model=4, rules={"heads": "model", "d_ff": "model"})
    def forward(self, x: Tensor["batch", "seq", "d"], wq: Tensor["d", "heads", "k"], wk: Tensor["d", "heads", "k"],
                w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "seq", "d"]:
        return self.block(self.block(x, wq, wk, w1, w2), wq, wk, w1, w2)


def scenario(mod, pick):
    args = inputs()
    model = mod.Model(mod.Cfg())
    out = pick(model.forward)(*args)
    grads = jax.grad(lambda *a: jnp.sum(pick(model.forward)(*a) ** 2), argnums=(0, 1, 3, 4))(*args)
    return out, grads


def inputs():
    rng = np.random.default_rng(301)
    f = lambda *s: rng.standard_normal(s).astype(np.float32) * 0.5  # noqa: E731
    return f(4, 5, 8), f(8, 4, 2), f(8, 4, 2), f(8, 16), f(16, 8)
