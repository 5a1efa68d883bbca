"""A NamedTuple unpacked into its fields, as jraph-style code opens a graph: ``nodes, senders, receivers =
graph``, then gathers, scatters back by ``jax.ops.segment_sum`` and normalises by degree; the hidden dim split
over 'model', the edges over 'data'.  Also a NamedTuple the function builds of partial sums (``x @ w`` over the
split hidden dim, bfloat16 in) unpacked: each name holds its field, completed in its dtype.  Before, "assignment
to 'nodes, senders, receivers'", whose fix ("assign arrays to plain names") named what it already did (the GNN
attack, session 25)."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Graph(NamedTuple):
    nodes: Tensor["nodes", "hidden"]
    senders: Tensor["edges"]
    receivers: Tensor["edges"]


class Pair(NamedTuple):
    a: jax.Array
    b: jax.Array


@mesh(data=2, model=4, rules={"hidden": "model", "edges": "data"})
def message_pass(graph: Graph, w: Tensor["hidden", "out"]):
    nodes, senders, receivers = graph
    n = nodes.shape[0]
    deg = jax.ops.segment_sum(jnp.ones_like(receivers, dtype=nodes.dtype), receivers, num_segments=n)
    agg = jax.ops.segment_sum(nodes[senders], receivers, num_segments=n)
    return jnp.tanh((agg / jnp.maximum(deg, 1.0)[:, None]) @ w)


@mesh(model=8, rules={"hidden": "model"})
def unpacked_partials(x: Tensor["batch", "hidden"], w: Tensor["hidden", "out"]):
    a, b = Pair(a=x @ w, b=jnp.sum(x, axis=-1))
    return jnp.tanh(a) * b[:, None]


def inputs():
    rng = np.random.default_rng(65)
    graph = Graph(rng.standard_normal((8, 8)).astype(np.float32), rng.integers(-2, 10, 6).astype(np.int32),
                  rng.integers(0, 8, 6).astype(np.int32))
    x = rng.standard_normal((4, 8)).astype(jnp.bfloat16)
    return {"message_pass": (graph, rng.standard_normal((8, 4)).astype(np.float32)),
            "unpacked_partials": (x, rng.standard_normal((8, 4)).astype(jnp.bfloat16))}
