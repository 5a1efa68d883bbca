"""DLRM's pairwise feature interactions: the dot products of every pair of feature vectors
(``einsum('bfd,bgd->bfg')``), the upper triangle read by ``iu, ju = jnp.triu_indices(F, 1)`` and ``z[:, iu, ju]``,
beside a batch split over 'batch' and the top MLP's hidden dim over 'model'; the lower triangle with the diagonal
(``tril_indices``) and the index arrays apart (``z[iu, :, ju]``: their dim comes first, as NumPy places it).
Each device indexes its own block; where an indexed dim is split (the rows of a batch-by-batch matrix, a split
sequence) each device reads the entries its block holds, zeros elsewhere (``mr.multi_index``, a partial sum; negative
ids wrap, out of range ones are clamped, as JAX indexes).  Before, "advanced indexing with an array beside indices other than ':'" with
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


@mesh(batch=2, model=4, rules={"seq": "model"})
def split_rows(a: Tensor["batch", "seq", "d"], ids: Tensor["k"]):
    z = jnp.einsum("bsd,bSd->bsS", a, a)
    return jnp.tanh(z[:, ids, ids - 3])


@mesh(batch=8)
def batch_pairs(a: Tensor["batch", "d"]):
    z = jnp.einsum("xd,Xd->xX", a, a)
    iu, ju = jnp.triu_indices(a.shape[0], 1)
    return jnp.tanh(z[iu, ju]).sum()


def inputs():
    rng = np.random.default_rng(47)
    dense = rng.standard_normal((8, 4)).astype(np.float32)
    emb = rng.standard_normal((8, 3, 4)).astype(np.float32)
    w1 = (rng.standard_normal((10, 8)) / 3).astype(np.float32)  # 6 pairs of 4 features + 4 dense
    w2 = rng.standard_normal(8).astype(np.float32)
    return {"interact": (dense, emb, w1, w2), "lower": (rng.standard_normal((3, 8, 3)).astype(np.float32),),
            "split_rows": (rng.standard_normal((4, 8, 3)).astype(np.float32), np.array([0, 5, -1, 9, -20, 3], np.int32)),
            "batch_pairs": (rng.standard_normal((16, 3)).astype(np.float32),)}
