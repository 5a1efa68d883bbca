"""In-degrees by ``jnp.bincount(receivers, length=n)`` (and weighted by ``weights=``), as GCN code normalises,
with the edges split across devices: each device counts its own ids, a partial sum completed where it is read.
Ids include negatives (JAX counts them at 0) and ids past ``length`` (dropped).  Before, "jnp.bincount has no
meshify rule" over split edges (the GNN attack, session 25)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"edges": ("data", "model")})
def normalised(h: Tensor["nodes", "hidden"], receivers: Tensor["edges"], w: Tensor["edges"]):
    deg = jnp.bincount(receivers, length=h.shape[0]).astype(h.dtype)
    weighted = jnp.bincount(receivers, w, length=h.shape[0])
    return jnp.tanh(h / jnp.sqrt(jnp.maximum(deg, 1.0))[:, None] + weighted[:, None])


def inputs():
    rng = np.random.default_rng(67)
    receivers = rng.integers(-3, 20, 32).astype(np.int32)
    return {"normalised": (rng.standard_normal((16, 4)).astype(np.float32), receivers,
                           rng.standard_normal(32).astype(np.float32))}
