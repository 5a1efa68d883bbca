"""A Python loop, a generator and a comprehension over a tuple whose items differ only by names meshify
infers (two slices of one dim, ``seq[:2]?`` and ``seq[2:4]?``; a reshape's round trip beside the hinted
value): each iteration binds one value with the user's names (was refused as "different layouts")."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "seq", "d_model"], w: Tensor["d_model", "d_ff"]):
    a, b = x[:, :2], x[:, 2:4]
    total = sum(s for s in (a, b * 2))
    B, L, D = x.shape
    back = jnp.tanh(x.reshape(B, L, 4, D // 4)).reshape(B, L, D)
    hs = [jax.nn.gelu(s @ w) for s in (x, back)]
    acc = jnp.zeros_like(hs[0])
    for h in hs:
        acc = acc + h
    return total, acc.sum(-1)


def inputs():
    rng = np.random.default_rng(0)
    return rng.normal(size=(8, 4, 16)).astype(np.float32), rng.normal(size=(16, 32)).astype(np.float32) / 4
