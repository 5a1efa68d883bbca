"""``jax.ops.segment_max``/``segment_min`` (GraphSAGE's max aggregation, PointNet's pooling) with the edges split
across devices: each device's segment maxima, then their max across devices (``mr.segment_max``); the features
split: local.  Ties across devices share the gradient among all rows holding the max (as JAX's does on one
device, not per device first; a segment whose max is the fill value -inf counts the fill as one more, as JAX's
scatter max does); a NaN on one device makes its segment NaN (an all-reduce max drops NaNs: carried apart);
empty segments, negative and out-of-range ids (dropped), float16 and int32 data.  Before, "jax.ops.segment_max
has no meshify rule"."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(edges=8)
def f(m: Tensor["edges", "hidden"], ids: Tensor["edges"], nodes: Tensor["nodes", "hidden"]):
    mx = jax.ops.segment_max(m, ids, num_segments=nodes.shape[0])
    mn = jax.ops.segment_min(m * 2, ids, nodes.shape[0], indices_are_sorted=False)
    return jnp.where(jnp.isfinite(mx), mx, 0) + jnp.where(jnp.isfinite(mn), mn, 0) + nodes


@mesh(edges=2, model=4, rules={"hidden": "model"})
def g(m: Tensor["edges", "hidden"], ids: Tensor["edges"], nodes: Tensor["nodes", "hidden"],
      w: Tensor["hidden", "out"]):
    mx = jax.ops.segment_max(m @ (w @ w.T), ids, num_segments=nodes.shape[0])
    return jnp.where(jnp.isfinite(mx), mx, 0.0) * nodes


@mesh(edges=8)
def counts(c: Tensor["edges"], ids: Tensor["edges"]):
    return jax.ops.segment_max(c, ids, 6), jax.ops.segment_min(c, ids, 6)


def inputs():
    r = np.random.default_rng(301)
    E, N, H = 32, 6, 8
    m = r.standard_normal((E, H)).astype(np.float32)
    m[3] = m[17]
    ids = r.integers(-1, N + 1, E).astype(np.int32)
    ids[3] = ids[17] = 2
    ids[5] = ids[6] = ids[30] = 4
    m[5] = m[6] = m[30] = 9.0
    ids[ids == 1] = 3  # segment 1 empty
    nodes = r.standard_normal((N, H)).astype(np.float32)
    w = (r.standard_normal((H, 4)) / 2).astype(np.float32)
    c = r.integers(-50, 50, E).astype(np.int32)
    special = m.copy()
    special[0, 0] = np.nan
    special[ids == 5, 1] = -np.inf
    return {"f": (m, ids, nodes), "g": (m, ids, nodes, w), "counts": (c, ids), "edge_values": (special, ids),
            "f16": (m.astype(np.float16), ids, nodes.astype(np.float16))}


@mesh(edges=8)
def edge_values(m: Tensor["edges", "hidden"], ids: Tensor["edges"]):
    return jax.ops.segment_max(m, ids, 6), jax.ops.segment_min(m, ids, 6)


@mesh(edges=8)
def f16(m: Tensor["edges", "hidden"], ids: Tensor["edges"], nodes: Tensor["nodes", "hidden"]):
    mx = jax.ops.segment_max(m, ids, num_segments=nodes.shape[0])
    return jnp.where(jnp.isfinite(mx), mx, 0) + nodes
