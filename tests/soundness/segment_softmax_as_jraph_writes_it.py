"""jraph's ``segment_softmax`` as written there: ``jax.ops.segment_max(logits, segment_ids, num_segments,
indices_are_sorted, unique_indices)`` with its options passed by position, then ``segment_sum`` the same way,
over edges split across devices (each device's segment maxima, then theirs).  Receivers include an empty
segment (its max is -inf, never read back).  Before, "segment_max's options passed by position beside rows split
across devices", though segment_sum written alike was accepted (the GNN attack, session 25)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def segment_softmax(logits, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False):
    maxs = jax.ops.segment_max(logits, segment_ids, num_segments, indices_are_sorted, unique_indices)
    logits = jnp.exp(logits - maxs[segment_ids])
    normalizers = jax.ops.segment_sum(logits, segment_ids, num_segments, indices_are_sorted, unique_indices)
    return logits / normalizers[segment_ids]


@mesh(data=8, rules={"edges": "data"})
def attention(logits: Tensor["edges"], receivers: Tensor["edges"], values: Tensor["edges", "d"]):
    weights = segment_softmax(logits, receivers, 16)
    return jax.ops.segment_sum(weights[:, None] * values, receivers, num_segments=16)


def inputs():
    rng = np.random.default_rng(66)
    receivers = (np.arange(32) % 15).astype(np.int32)  # segment 15 empty
    return {"attention": (rng.standard_normal(32).astype(np.float32), receivers,
                          rng.standard_normal((32, 4)).astype(np.float32))}
