"""Graph network on a 2x4 mesh: gnn_plain.py with dims hints and one @mesh line, nothing else."""

from __future__ import annotations

from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp

from meshify import mesh


class GraphsTuple(NamedTuple):
    nodes: Annotated[jax.Array, "nodes", "features"]
    senders: Annotated[jax.Array, "edges"]
    receivers: Annotated[jax.Array, "edges"]
    n_node: Annotated[jax.Array, "graphs"]


class GCNLayer(NamedTuple):
    w: Annotated[jax.Array, "d_model", "hidden"]
    b: Annotated[jax.Array, "hidden"]
    proj: Annotated[jax.Array, "hidden", "d_model"]


class GATLayer(NamedTuple):
    w: Annotated[jax.Array, "d_model", "attn_features"]
    att_src: Annotated[jax.Array, "heads", "d_head"]
    att_dst: Annotated[jax.Array, "heads", "d_head"]
    b: Annotated[jax.Array, "attn_features"]
    proj: Annotated[jax.Array, "attn_features", "d_model"]


class GNN(NamedTuple):
    embed: Annotated[jax.Array, "features", "d_model"]
    gcn: list[GCNLayer]
    gat: list[GATLayer]
    readout: Annotated[jax.Array, "d_model", "classes"]


class Config(NamedTuple):
    num_heads: int = 8
    negative_slope: float = 0.2


DEFAULT_CONFIG = Config()


def add_self_edges(senders, receivers, total_num_nodes):
    """Every node also sends to itself (jraph's ``add_self_edges_fn``)."""
    receivers = jnp.concatenate((receivers, jnp.arange(total_num_nodes)), axis=0)
    senders = jnp.concatenate((senders, jnp.arange(total_num_nodes)), axis=0)
    return senders, receivers


def layer_norm(x, eps=1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps)


def gcn_layer(nodes, senders, receivers, p: GCNLayer):
    """jraph's GraphConvolution with symmetric normalisation, then a projection back to the residual."""
    total_num_nodes = nodes.shape[0]
    senders, receivers = add_self_edges(senders, receivers, total_num_nodes)
    x = nodes @ p.w
    sender_degree = jax.ops.segment_sum(jnp.ones_like(senders), senders, total_num_nodes)
    receiver_degree = jax.ops.segment_sum(jnp.ones_like(receivers), receivers, total_num_nodes)
    x = x * jax.lax.rsqrt(jnp.maximum(sender_degree, 1.0))[:, None]
    x = jax.ops.segment_sum(x[senders], receivers, num_segments=total_num_nodes)
    x = x * jax.lax.rsqrt(jnp.maximum(receiver_degree, 1.0))[:, None]
    return jax.nn.relu(x + p.b) @ p.proj


def segment_softmax(logits, segment_ids, num_segments):
    maxs = jax.ops.segment_max(logits, segment_ids, num_segments)
    logits = jnp.exp(logits - jax.lax.stop_gradient(maxs[segment_ids]))
    normalizers = jax.ops.segment_sum(logits, segment_ids, num_segments)
    return logits / normalizers[segment_ids]


def gat_layer(nodes, senders, receivers, p: GATLayer, cfg: Config):
    """Multi-head graph attention: per-edge scores from the two ends, a softmax over each receiver's edges."""
    n = nodes.shape[0]
    senders, receivers = add_self_edges(senders, receivers, n)
    x = (nodes @ p.w).reshape(n, cfg.num_heads, -1)
    src = jnp.einsum("nhd,hd->nh", x, p.att_src)
    dst = jnp.einsum("nhd,hd->nh", x, p.att_dst)
    logits = jax.nn.leaky_relu(src[senders] + dst[receivers], cfg.negative_slope)
    weights = segment_softmax(logits, receivers, n)
    messages = x[senders] * weights[..., None]
    out = jax.ops.segment_sum(messages, receivers, num_segments=n).reshape(n, -1)
    return jax.nn.elu(out + p.b) @ p.proj


@mesh(batch=2, model=4, rules={"hidden": "model", "attn_features": "model", "heads": "model", "edges": "batch"})
def gnn(params: GNN, graph: GraphsTuple, cfg: Config = DEFAULT_CONFIG) -> Annotated[jax.Array, "graphs", "classes"]:
    """Per-graph class logits: node embedding, GCN then GAT blocks with residuals, mean pooling per graph."""
    h = graph.nodes @ params.embed
    for p in params.gcn:
        h = h + gcn_layer(layer_norm(h), graph.senders, graph.receivers, p)
    for block in params.gat:
        h = h + gat_layer(layer_norm(h), graph.senders, graph.receivers, block, cfg)
    n_graph = graph.n_node.shape[0]
    node_graph = jnp.repeat(jnp.arange(n_graph), graph.n_node, total_repeat_length=h.shape[0])
    pooled = jax.ops.segment_sum(h, node_graph, n_graph) / jnp.maximum(graph.n_node, 1)[:, None]
    return layer_norm(pooled) @ params.readout
