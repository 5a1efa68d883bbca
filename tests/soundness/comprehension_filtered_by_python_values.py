"""Comprehensions filtered by Python values, as model code picks layers' outputs: ``[h for i, h in
enumerate(hs) if i % 2 == 1]`` of hidden states appended in a loop, ``[... for i in range(L) if i != 2]``
with partial sums completed in the element, a generator with a filter summed, a filter that keeps all."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_model"], w1: Tensor["layers", "d_model", "d_ff"],
      w2: Tensor["layers", "d_ff", "d_model"]):
    hs = []
    for i in range(4):
        x = x + jax.nn.relu(x @ w1[i]) @ w2[i]
        hs.append(x)
    kept = [h for i, h in enumerate(hs) if i % 2 == 1]
    parts = [jnp.tanh(x @ w1[i]) @ w2[i] for i in range(4) if i != 2]
    total = sum(p.sum(-1) for p in parts if p is not None)
    return jnp.stack(kept), total, jnp.stack([h * 2 for h in (x, x * 3) if True])


def inputs():
    rng = np.random.default_rng(0)
    return (rng.normal(size=(8, 16)).astype(np.float32), (rng.normal(size=(4, 16, 32)) / 4).astype(np.float32),
            (rng.normal(size=(4, 32, 16)) / 4).astype(np.float32))
