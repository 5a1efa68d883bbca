"""DLRM's interaction (issue #14) as a pattern: a dense vector split along d (its weight's output dim) joined
to a list of pooled embeddings whole along d (their tables split along the vocab), ``[dense] + pooled`` and
``pooled + [dense]``, then stacked and multiplied pairwise, the lower triangle joined back to the dense vector
along d.  The list's length is the number of tables (a list comprehension over a list parameter), so its
items have one layout: the literal's split item is gathered to it (named in a comment), where it was
refused ("a list whose length meshify does not know holds one layout"); the final concatenate of split d
with whole products gathers too.  2x4 and 1x8 meshes, gradients included."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh


EXPECT = "match"


def _interact(dense, pooled, first):
    features = jnp.stack([dense] + pooled if first else pooled + [dense], axis=1)
    z = jnp.einsum("bfd,bgd->bfg", features, features)
    li, lj = jnp.tril_indices(features.shape[1], k=-1)
    return jnp.concatenate([dense, z[:, li, lj]], axis=1)


def _model(x, w, tables, ids, top):
    dense = jax.nn.relu(x @ w)
    pooled = [jnp.take(t, ids[:, i], axis=0) for i, t in enumerate(tables)]
    return _interact(dense, pooled, True) @ top, _interact(dense * 2.0, pooled, False) @ top


@mesh(batch=2, model=4, rules={"d": "model", "vocab": "model"})
def f(x: Tensor["batch", "features"], w: Tensor["features", "d"], tables: list[Tensor["vocab", "d"]],
      ids: Tensor["batch", "tables"], top: Tensor["interactions", "out"]):
    return _model(x, w, tables, ids, top)


@mesh(batch=1, model=8, rules={"d": "model", "vocab": "model"})
def g(x: Tensor["batch", "features"], w: Tensor["features", "d"], tables: list[Tensor["vocab", "d"]],
      ids: Tensor["batch", "tables"], top: Tensor["interactions", "out"]):
    return _model(x, w, tables, ids, top)


def inputs():
    rng = np.random.default_rng(1441)

    def args(d):
        tables = [rng.standard_normal((16, d)).astype(np.float32) for _ in range(3)]
        return (rng.standard_normal((4, 5)).astype(np.float32), (rng.standard_normal((5, d)) / 2).astype(np.float32),
                tables, rng.integers(0, 16, (4, 3)).astype(np.int32),
                (rng.standard_normal((d + 6, 2)) / 4).astype(np.float32))

    return {"f": args(8), "g": args(16)}
