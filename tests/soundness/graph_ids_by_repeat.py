"""jraph's graph id of each node, ``jnp.repeat(jnp.arange(n_graph), n_node, total_repeat_length=N)`` (per-element
repeats to a length a dim sizes, whole on every device), then a segment-mean readout of node features split over
the hidden dim, and the same along an axis.  Before, "total_repeat_length= is not modelled", whose fix (drop it) led
to a raw JAX error (the GNN attack: rewritten with searchsorted)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"hidden": "model"})
def readout(nodes: Tensor["nodes", "hidden"], n_node: Tensor["graphs"]):
    n_graph = n_node.shape[0]
    ids = jnp.repeat(jnp.arange(n_graph), n_node, total_repeat_length=nodes.shape[0])
    total = jax.ops.segment_sum(nodes, ids, n_graph)
    count = jax.ops.segment_sum(jnp.ones_like(ids, dtype=nodes.dtype), ids, n_graph)
    return total / jnp.maximum(count, 1.0)[:, None]


@mesh(batch=8)
def by_rows(x: Tensor["batch", "k"], counts: Tensor["k"]):
    grown = jnp.repeat(x, counts, axis=1, total_repeat_length=12)
    return grown.sum(axis=1)


def inputs():
    rng = np.random.default_rng(59)
    return {"readout": (rng.standard_normal((16, 8)).astype(np.float32), np.array([5, 4, 0, 3], np.int32)),
            "by_rows": (rng.standard_normal((8, 3)).astype(np.float32), np.array([2, 5, 4], np.int32))}
