"""DLRM's pairwise feature interactions: the dot products of every pair of feature vectors
(``einsum('bfd,bgd->bfg')``), the upper triangle read by ``iu, ju = jnp.triu_indices(F, 1)`` and ``z[:, iu, ju]``,
beside a batch split over 'batch' and the top MLP's hidden dim over 'model'; the lower triangle with the diagonal
(``tril_indices``) and the index arrays apart (``z[iu, :, ju]``: their dim comes first, as NumPy places it).
Each device indexes its own block.  Before, "advanced indexing with an array beside indices other than ':'" with
a fix that did not fit (the DLRM attack)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"hidden": "model"})
def interact(dense: Tensor["batch", "d"], emb: Tensor["batch", "tables", "d"], w1: Tensor["pairs_d", "hidden"],
             w2: Tensor["hidden"]):
    feats = jnp.concatenate([dense[:, None, :], emb], axis=1)
    z = jnp.einsum("bfd,bgd->bfg", feats, feats)
    iu, ju = jnp.triu_indices(feats.shape[1], k=1)
    flat = z[:, iu, ju]
    top: Tensor["batch", "pairs_d"] = jnp.concatenate([flat, dense], axis=1)
    return jax.nn.relu(top @ w1) @ w2


@mesh(batch=8)
def lower(z: Tensor["f", "batch", "g"]):
    il, jl = jnp.tril_indices(z.shape[0])
    return jnp.sum(z[il, :, jl] ** 2, axis=0)


def inputs():
    rng = np.random.default_rng(47)
    dense = rng.standard_normal((8, 4)).astype(np.float32)
    emb = rng.standard_normal((8, 3, 4)).astype(np.float32)
    w1 = (rng.standard_normal((10, 8)) / 3).astype(np.float32)  # 6 pairs of 4 features + 4 dense
    w2 = rng.standard_normal(8).astype(np.float32)
    return {"interact": (dense, emb, w1, w2), "lower": (rng.standard_normal((3, 8, 3)).astype(np.float32),)}
