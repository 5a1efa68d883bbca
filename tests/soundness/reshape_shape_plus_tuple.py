"""Reshapes spelled as a shape's slice concatenated with a tuple, as attention code splits heads:
``(x @ wq).reshape(x.shape[:-1] + (H, D))`` (q_features split into heads over 'model'), merged back with
``o.reshape(o.shape[:2] + (H * D,))``, and ``jnp.zeros(x.shape[:1] + (1, 1))`` beside a split batch;
gradients through all.  Before, "reshape to a whole shape variable"."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
H, D = 4, 2


@mesh(batch=2, model=4, rules={"q_features": "model"})
def f(x: Tensor["batch", "length", "d_model"], wq: Tensor["d_model", "q_features"],
      wo: Tensor["q_features", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    q = (x @ wq).reshape(x.shape[:-1] + (H, D))
    o = jnp.tanh(q) * 2.0
    bias = jnp.zeros(x.shape[:1] + (1, 1)) + 0.5
    return o.reshape(o.shape[:2] + (H * D,)) @ wo + bias


def inputs():
    rng = np.random.default_rng(311)
    return (rng.standard_normal((4, 3, 6)).astype(np.float32), rng.standard_normal((6, 8)).astype(np.float32),
            rng.standard_normal((8, 6)).astype(np.float32))
