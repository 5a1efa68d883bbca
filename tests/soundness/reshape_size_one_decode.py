"""A decode step's reshapes of a one-token value: ``x[:, None, :] @ wq`` is [batch, 1, q_features], reshaped
``(B, 1, H, D)`` (the literal 1 stays the size-1 dim; q_features split into heads over 'model'), also under a
hint naming the 1 (``Tensor["batch", "1", "heads", "head_dim"]``), and merged back ``(B, 1, H * D)``;
gradients through all.  Before, "reshape merges ['1', 'q_features'] into 3 new dims"."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"q_features": "model", "heads": "model"})
def f(x: Tensor["batch", "d_model"], wq: Tensor["d_model", "q_features"], wo: Tensor["q_features", "d_model"]
      ) -> Tensor["batch", "1", "d_model"]:
    B = x.shape[0]
    h = x[:, None, :]
    q = (h @ wq).reshape(B, 1, 4, 2)
    k: Tensor["batch", "1", "heads", "head_dim"] = (h @ wq).reshape(B, 1, 4, 2)
    s = jnp.tanh(q) * k
    return s.reshape(B, 1, 8) @ wo


def inputs():
    rng = np.random.default_rng(306)
    return (rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal((6, 8)).astype(np.float32),
            rng.standard_normal((8, 6)).astype(np.float32))
