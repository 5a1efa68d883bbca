"""A reshape whose literal sizes meshify takes to keep the hinted whole dims before a split one (see
reshape_hinted_dims_as_literals), where they do not: ``x.reshape(2, 16, 8, 16)`` of [batch, seq, d] with 4 rows of
8 and d split.  On one device this merges half the batch into seq; each device's block would reshape all the same
(a silently different array).  Refused when the function runs (``mr.kept_dims``: size 2 keeps dim 0, which is 4
in this call)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d": "model", "heads": "model"})
def f(x: Tensor["batch", "seq", "d"]):
    h = x.reshape(2, 16, 8, 16)
    return jnp.sum(h[:, :8] * h[:, 8:])


def inputs():
    return (np.random.default_rng(12).standard_normal((4, 8, 128)).astype(np.float32),)
