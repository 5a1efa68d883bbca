"""A gather beside ``None`` / ``jnp.newaxis`` / ``...`` in one subscript, as GNN code normalises messages:
``h[senders] * norm[senders, None]``, ``x[None, ids]``, ``h[ids, None, :]``, ``h[ids, ...]``, ``norm[ids,
jnp.newaxis]``; read as NumPy reads them (the lookup, then the new axes where they stand), over a table split
along its hidden dim, and along the looked-up dim itself (a masked lookup).  Ids include negatives and ids past
the end (clamped, as indexing reads them).  Before, a KeyError from inside meshify (the GNN attack, session 25)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=4, rules={"hidden": "model"})
def hidden_split(h: Tensor["nodes", "hidden"], norm: Tensor["nodes"], senders: Tensor["edges"]):
    msg = h[senders] * norm[senders, None] + h[senders, None, :].sum(1) + h[senders, ...]
    return jnp.tanh(msg) * norm[None, senders].T


@mesh(data=8, rules={"nodes": "data"})
def nodes_split(h: Tensor["nodes", "hidden"], norm: Tensor["nodes"], senders: Tensor["edges"]):
    return jnp.sin(h[senders, ...] * norm[senders, jnp.newaxis] + h[None, senders][0])


def inputs():
    rng = np.random.default_rng(64)
    senders = rng.integers(-8, 16, 12).astype(np.int32)
    senders[:2] = [-1, 20]  # a negative id, one past the end
    h, norm = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    return {"hidden_split": (h, norm, senders), "nodes_split": (h, norm, senders)}
