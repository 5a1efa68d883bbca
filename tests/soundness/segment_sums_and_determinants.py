"""A jraph-style graph network's message passing (``jax.ops.segment_sum`` of per-edge messages into nodes) with
the edges split (each device sums its own edges: a partial sum completed where it is needed) or the hidden
features split (columns never mix); and a Glow invertible 1x1 convolution's log-determinant
(``jnp.linalg.slogdet`` of a whole weight, ``det`` of a batch of matrices split along the batch)."""

from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh

EXPECT = "match"

T = Annotated


def message_passing(nodes, edges, senders, receivers, w_msg, w_node):
    messages = jax.nn.relu(jnp.concatenate([edges, nodes[senders]], axis=-1) @ w_msg)
    agg = jax.ops.segment_sum(messages, receivers, num_segments=nodes.shape[0])
    return jax.nn.relu(jnp.concatenate([nodes, agg], axis=-1) @ w_node)


@mesh(batch=2, model=4, rules={"edges": "model"})
def gnn_edges(nodes: T[jax.Array, "nodes", "hidden"], edges: T[jax.Array, "edges", "hidden"],
              senders: T[jax.Array, "edges"], receivers: T[jax.Array, "edges"],
              w_msg: T[jax.Array, "msg_in", "hidden"], w_node: T[jax.Array, "node_in", "hidden"]):
    return message_passing(nodes, edges, senders, receivers, w_msg, w_node)


@mesh(batch=2, model=4, rules={"hidden_out": "model"})
def gnn_features(nodes: T[jax.Array, "nodes", "hidden"], edges: T[jax.Array, "edges", "hidden"],
                 receivers: T[jax.Array, "edges"], w: T[jax.Array, "hidden", "hidden_out"]):
    agg = jax.ops.segment_sum(edges @ w, receivers, num_segments=nodes.shape[0])
    return jnp.tanh(agg) + nodes @ w


@mesh(batch=8)
def invconv(x: T[jax.Array, "batch", "h", "w", "c"], w: T[jax.Array, "c", "c2"],
            mats: T[jax.Array, "batch", "m", "n"]):
    H, W = x.shape[1], x.shape[2]
    y = jnp.einsum("bhwc,cd->bhwd", x, w)
    logdet = H * W * jnp.linalg.slogdet(w)[1]
    sign, logabs = jnp.linalg.slogdet(mats)
    return y, logdet + jnp.zeros(x.shape[0]) + logabs * sign + jnp.linalg.det(mats)


def inputs():
    rng = np.random.default_rng(0)
    nodes = rng.normal(size=(16, 8)).astype(np.float32)
    edges = rng.normal(size=(32, 8)).astype(np.float32)
    senders = rng.integers(0, 16, size=32).astype(np.int32)
    receivers = rng.integers(0, 16, size=32).astype(np.int32)
    w_msg = (rng.normal(size=(16, 8)) * 0.3).astype(np.float32)
    w_node = (rng.normal(size=(16, 8)) * 0.3).astype(np.float32)
    w = (rng.normal(size=(8, 8)) * 0.3 + np.eye(8)).astype(np.float32)
    mats = (rng.normal(size=(8, 3, 3)) * 0.3 + np.eye(3)).astype(np.float32)
    x = rng.normal(size=(8, 4, 4, 8)).astype(np.float32)
    return {"gnn_edges": (nodes, edges, senders, receivers, w_msg, w_node),
            "gnn_features": (nodes, edges, receivers, (rng.normal(size=(8, 16)) * 0.3).astype(np.float32)),
            "invconv": (x, w, mats)}
