"""DLRM on a 2x4 mesh: dlrm_plain.py with dims hints and one @mesh line, nothing else."""

from __future__ import annotations

from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp

from meshify import mesh


class MLP(NamedTuple):
    w1: Annotated[jax.Array, "d_in", "hidden"]
    b1: Annotated[jax.Array, "hidden"]
    w2: Annotated[jax.Array, "hidden", "d_out"]
    b2: Annotated[jax.Array, "d_out"]


class DLRM(NamedTuple):
    bottom: Annotated[MLP, {"d_in": "dense_features", "hidden": "bottom_hidden", "d_out": "d_embed"}]
    embeddings: list[Annotated[jax.Array, "vocab", "d_embed"]]
    top: Annotated[MLP, {"d_in": "interactions", "hidden": "top_hidden", "d_out": "1"}]


def mlp(p: MLP, x, final_activation=True):
    x = jax.nn.relu(x @ p.w1 + p.b1)
    x = x @ p.w2 + p.b2
    return jax.nn.relu(x) if final_activation else x


def embedding_bag(table, ids):
    """Sum pooling of each row's ids; padding ids (-1 and past the table) read zeros."""
    rows = jnp.take(table, ids, axis=0, mode="fill", fill_value=0.0)
    return rows.sum(axis=1)


def interact(dense, sparse):
    """Pairwise dot products of the dense vector and the pooled embeddings, lower triangle without the diagonal."""
    features = jnp.stack([dense] + sparse, axis=1)
    num_features = features.shape[1]
    z = jnp.einsum("bfd,bgd->bfg", features, features)
    li, lj = jnp.tril_indices(num_features, k=-1)
    return jnp.concatenate([dense, z[:, li, lj]], axis=1)


@mesh(batch=2, model=4, rules={"vocab": "model", "top_hidden": "model"})
def dlrm(params: DLRM, dense_x: Annotated[jax.Array, "batch", "dense_features"], sparse_ids: Annotated[jax.Array, "batch", "tables", "bag"]) -> Annotated[jax.Array, "batch"]:
    """Click logits: bottom MLP on the dense features, one embedding bag per sparse feature, top MLP."""
    x = mlp(params.bottom, dense_x)
    pooled = [embedding_bag(table, sparse_ids[:, i, :]) for i, table in enumerate(params.embeddings)]
    r = interact(x, pooled)
    return jnp.squeeze(mlp(params.top, r, final_activation=False), axis=-1)
