"""Reshapes spelled with a shape's slice, as attention code splits heads: ``(x @ wq).reshape(*x.shape[:-1],
H, D)`` (q_features split into heads over 'model'), merged back with ``o.reshape(*o.shape[:-2], H * D)``,
and ``jnp.zeros(x.shape[:1])`` beside a split batch; gradients through all.  Before, "*args/**kwargs in a
call to reshape"."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"q_features": "model"})
def f(x: Tensor["batch", "length", "d_model"], wq: Tensor["d_model", "q_features"],
      wo: Tensor["q_features", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    q = (x @ wq).reshape(*x.shape[:-1], 4, 2)
    o = jnp.tanh(q) * 2.0
    bias = jnp.zeros(x.shape[:1]) + 0.5
    return o.reshape(*o.shape[:-2], 8) @ wo + bias[:, None, None]


def inputs():
    rng = np.random.default_rng(310)
    return (rng.standard_normal((4, 3, 6)).astype(np.float32), rng.standard_normal((6, 8)).astype(np.float32),
            rng.standard_normal((8, 6)).astype(np.float32))
