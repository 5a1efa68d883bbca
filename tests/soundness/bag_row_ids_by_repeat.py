"""Multi-hot bags pooled by segment sums, as recommender code writes them: the bags' entries flattened
(``ids.reshape(-1)``) and each entry's bag id by ``jnp.repeat(jnp.arange(B), bag)``, padding ids -1 masked; the
table's rows split over 'model' and the batch over 'batch'.  The repeat is named as the reshape names the flattened
entries (``batch_bag?``), so the ids line up with the rows with no hint; a split vector repeated stays split.
Before, "segment_ids 'seg' are an array of dims meshify cannot infer", with a fix naming ``Tensor['batch_bag?']``,
a name no hint may spell (the DLRM attack)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"rows": "model"})
def pooled(table: Tensor["rows", "d"], ids: Tensor["batch", "bag"], w: Tensor["d"]):
    B, bag = ids.shape
    flat = ids.reshape(-1)
    seg = jnp.repeat(jnp.arange(B), bag)
    valid = flat >= 0
    vecs = jnp.take(table, jnp.where(valid, flat, 0), axis=0) * valid[:, None]
    sums = jax.ops.segment_sum(vecs, seg, num_segments=B)
    counts = jax.ops.segment_sum(valid.astype(table.dtype), seg, num_segments=B)
    return jnp.tanh(sums / jnp.maximum(counts, 1.0)[:, None] @ w)


@mesh(batch=8)
def spread(x: Tensor["batch"], y: Tensor["batch", "k"]):
    k = y.shape[1]
    return jnp.repeat(x, k, axis=0) * y.reshape(-1) + jnp.repeat(x * 2, k)


def inputs():
    rng = np.random.default_rng(43)
    table = rng.standard_normal((16, 4)).astype(np.float32)
    ids = rng.integers(-1, 16, (4, 3)).astype(np.int32)
    ids[0] = -1  # an empty bag
    return {"pooled": (table, ids, rng.standard_normal(4).astype(np.float32)),
            "spread": (rng.standard_normal(8).astype(np.float32), rng.standard_normal((8, 3)).astype(np.float32))}
