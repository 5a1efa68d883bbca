"""A named partial sum (``z = h @ w2``, contracted ``hidden`` split) gathered by sender ids and summed into receiver
segments, as a GCN layer orders it (transform, gather, aggregate), then used: segment sums keep their operand's
dtype, so meshify reads the dtype to cast the float32 sum back to.  Before, "cannot tell the dtype of 'agg'"
with a fix that did not apply (the GNN attack: the transform moved out of the helper)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def gcn_layer(h, senders, receivers, w, n):
    z = h @ w
    agg = jax.ops.segment_sum(z[senders], receivers, n)
    deg = jax.ops.segment_sum(jnp.ones_like(receivers, dtype=h.dtype), receivers, n)
    return jax.nn.relu(agg * jax.lax.rsqrt(jnp.maximum(deg, 1.0))[:, None])


@mesh(batch=2, model=4, rules={"edges": "batch", "hidden": "model"})
def f(h: Tensor["nodes", "hidden"], senders: Tensor["edges"], receivers: Tensor["edges"],
      w: Tensor["hidden", "hidden2"]):
    return gcn_layer(h, senders, receivers, w, h.shape[0])


@mesh(batch=2, model=4, rules={"hidden": "model"})
def minimal(h: Tensor["nodes", "hidden"], receivers: Tensor["nodes"], w: Tensor["hidden", "hidden2"]):
    z = h @ w
    agg = jax.ops.segment_sum(z, receivers, 4)
    return agg + 1.0


def inputs():
    rng = np.random.default_rng(53)
    h, w = rng.standard_normal((6, 8)).astype(np.float32), rng.standard_normal((8, 3)).astype(np.float32)
    senders = rng.integers(-2, 8, 8).astype(np.int32)
    receivers = rng.integers(-1, 7, 8).astype(np.int32)
    return {"f": (h, senders, receivers, w), "minimal": (h, rng.integers(0, 4, 6).astype(np.int32), w)}
