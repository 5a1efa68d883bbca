"""jraph's graph id of each node, ``jnp.repeat(jnp.arange(n_graph), n_node, total_repeat_length=N)``, with the
counts ``n_node`` split over 'batch' (a user's ``"graphs": "batch"``, to split the per-graph readout): the counts
are gathered whole first (where an entry lands depends on every count before it), then the per-graph mean by
``segment_sum`` is split again; and a value split along the dim it repeats along (``axis=1``), gathered the same
way.  Before, "jnp.repeat(..., total_repeat_length=...) of 'n_node', split along the repeated dim" (the GNN
zoo attack, session 35)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"graphs": "batch", "d": "model"})
def readout(h: Tensor["nodes", "d"], n_node: Tensor["graphs"]) -> Tensor["graphs", "d"]:
    n_graph = n_node.shape[0]
    node_graph = jnp.repeat(jnp.arange(n_graph), n_node, total_repeat_length=h.shape[0])
    return jax.ops.segment_sum(h, node_graph, n_graph) / jnp.maximum(n_node, 1)[:, None]


@mesh(batch=2, model=4, rules={"k": "model"})
def grown(x: Tensor["batch", "k"], counts: Tensor["k"]) -> Tensor["batch", "total"]:
    return jnp.repeat(x * 2.0, counts, axis=1, total_repeat_length=12)


def inputs():
    rng = np.random.default_rng(5)
    return {"readout": (rng.standard_normal((24, 8)).astype(np.float32), np.array([5, 7, 4, 6], np.int32)),
            "grown": (rng.standard_normal((4, 8)).astype(np.float32), np.array([2, 0, 1, 3, 1, 1, 0, 1], np.int32))}
