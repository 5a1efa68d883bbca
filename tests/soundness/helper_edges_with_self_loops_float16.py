"""A GCN's degree normalisation as jraph writes it, in float16, the features split over 'model' (``nodes @ w`` a
partial sum) and the edges over 'batch': ``senders, receivers = add_self_edges(senders, receivers, n)``, a helper
returning ``jnp.concatenate((senders, jnp.arange(n)))``, then ``x * rsqrt(maximum(segment_sum(ones_like(senders)),
1.0))`` scaling the partial sum.  The psum completing it casts back to the dtype of its carriers, among them the
helper's ``jnp.arange(n)``, written in the caller as ``jnp.arange(1)`` (an int array's dtype whatever ``n`` is).
Before, "cannot tell the dtype of 'x', a partial sum" (the GNN zoo attack with rules ``{"d_model": "model",
"edges": "batch"}``, session 35)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def add_self_edges(senders, receivers, n):
    receivers = jnp.concatenate((receivers, jnp.arange(n)), axis=0)
    senders = jnp.concatenate((senders, jnp.arange(n)), axis=0)
    return senders, receivers


def conv(nodes, senders, receivers, w):
    n = nodes.shape[0]
    senders, receivers = add_self_edges(senders, receivers, n)
    x = nodes @ w
    deg = jax.ops.segment_sum(jnp.ones_like(senders), senders, n)
    x = x * jax.lax.rsqrt(jnp.maximum(deg, 1.0))[:, None]
    x = jax.ops.segment_sum(x[senders], receivers, num_segments=n)
    return jax.nn.relu(x)


@mesh(batch=2, model=4, rules={"d": "model", "edges": "batch"})
def f(nodes: Tensor["nodes", "d"], w: Tensor["d", "h"], senders: Tensor["edges"], receivers: Tensor["edges"]):
    return conv(nodes, senders, receivers, w)


def inputs():
    rng = np.random.default_rng(7)
    return (rng.standard_normal((8, 8)).astype(np.float16), rng.standard_normal((8, 4)).astype(np.float16),
            rng.integers(0, 8, 16).astype(np.int32), rng.integers(0, 8, 16).astype(np.int32))
